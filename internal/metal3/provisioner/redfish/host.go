package redfish

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// host is the Provisioner of one host: its target's shared client and the
// path of its system.
type host struct {
	f          *factory
	c          *client
	endpoint   string
	systemPath string // resolved on first use when the address has none
}

var _ provisioner.BMC = (*host)(nil)

// api is the target's client bound to ctx, with a budget of
// Options.MaxRequests requests.
func (h *host) api(ctx context.Context) *gofish.APIClient {
	return h.c.api.WithContext(withBudget(ctx, h.f.opts.MaxRequests))
}

// fail classifies err and forgets the client when the BMC refused its
// credentials.
func (h *host) fail(op string, err error, notFound error) error {
	e := classify(h.endpoint, op, err, notFound)
	if credentialsRefused(e) {
		h.f.drop(h.c)
	}
	return e
}

// getJSON reads a resource into v.
func getJSON(api *gofish.APIClient, path string, v any) error {
	resp, err := api.Get(path)
	defer schemas.DeferredCleanupHTTPResponse(resp)
	if err != nil {
		return err
	}
	return json.NewDecoder(resp.Body).Decode(v)
}

// send POSTs (or PATCHes) a body and drains the answer.
func send(api *gofish.APIClient, method, path string, body any) error {
	var err error
	if method == "PATCH" {
		resp, perr := api.Patch(path, body)
		err = perr
		schemas.DeferredCleanupHTTPResponse(resp)
	} else {
		resp, perr := api.Post(path, body)
		err = perr
		schemas.DeferredCleanupHTTPResponse(resp)
	}
	return err
}

// serviceRoot holds the links this package follows from /redfish/v1/.
type serviceRoot struct {
	Systems  schemas.Link
	Managers schemas.Link
}

func (h *host) serviceRoot(api *gofish.APIClient, op string) (serviceRoot, error) {
	var root serviceRoot
	if err := getJSON(api, schemas.DefaultServiceRoot, &root); err != nil {
		return root, h.fail(op+": read the service root", err, provisioner.ErrRefused)
	}
	return root, nil
}

// system reads the host's ComputerSystem, resolving the service's only
// system when the address names none.
func (h *host) system(api *gofish.APIClient, op string) (*schemas.ComputerSystem, error) {
	if h.systemPath == "" {
		path, err := h.onlySystem(api, op)
		if err != nil {
			return nil, err
		}
		h.systemPath = path
	}
	sys, err := schemas.GetComputerSystem(api, h.systemPath)
	if err != nil {
		return nil, h.fail(op+": read system "+h.systemPath, err, provisioner.ErrNoSystem)
	}
	return sys, nil
}

func (h *host) onlySystem(api *gofish.APIClient, op string) (string, error) {
	root, err := h.serviceRoot(api, op)
	if err != nil {
		return "", err
	}
	if root.Systems == "" {
		return "", newError(h.endpoint, op, provisioner.ErrNoSystem, "the service root links no Systems")
	}
	coll, err := schemas.GetCollection(api, root.Systems.String())
	if err != nil {
		return "", h.fail(op+": list the systems", err, provisioner.ErrNoSystem)
	}
	switch len(coll.ItemLinks) {
	case 0:
		return "", newError(h.endpoint, op, provisioner.ErrNoSystem, "the BMC lists no systems")
	case 1:
		return coll.ItemLinks[0], nil
	default:
		return "", newError(h.endpoint, op, provisioner.ErrNoSystem,
			"the BMC has %d systems (%s): name one in the address's path", len(coll.ItemLinks), strings.Join(coll.ItemLinks, ", "))
	}
}

// Register checks the BMC answers, accepts the credentials and has the system.
func (h *host) Register(ctx context.Context) error {
	api := h.api(ctx)
	if _, err := h.serviceRoot(api, "register"); err != nil {
		return err
	}
	_, err := h.system(api, "register")
	return err
}

// powerOf maps a Redfish power state onto the provisioner's: a host
// powering on (or paused) counts as on, one powering off as off.
func powerOf(s schemas.PowerState) (provisioner.PowerState, bool) {
	switch s {
	case schemas.OnPowerState, schemas.PoweringOnPowerState, schemas.PausedPowerState:
		return provisioner.PowerOn, true
	case schemas.OffPowerState, schemas.PoweringOffPowerState:
		return provisioner.PowerOff, true
	default:
		return "", false
	}
}

func (h *host) power(sys *schemas.ComputerSystem, op string) (provisioner.PowerState, error) {
	state, ok := powerOf(sys.PowerState)
	if !ok {
		return "", newError(h.endpoint, op, provisioner.ErrUnreachable, "system %s reports power state %q", h.systemPath, string(sys.PowerState))
	}
	return state, nil
}

// PowerState reports whether the host is on.
func (h *host) PowerState(ctx context.Context) (provisioner.PowerState, error) {
	sys, err := h.system(h.api(ctx), "power state")
	if err != nil {
		return "", err
	}
	return h.power(sys, "power state")
}

// PowerOn turns the host on; a host already on is left alone.
func (h *host) PowerOn(ctx context.Context) error {
	api := h.api(ctx)
	sys, err := h.system(api, "power on")
	if err != nil {
		return err
	}
	state, err := h.power(sys, "power on")
	if err != nil || state == provisioner.PowerOn {
		return err
	}
	return h.reset(api, sys, schemas.OnResetType, "power on")
}

// PowerOff turns the host off, gracefully unless force; a host already off
// is left alone.
func (h *host) PowerOff(ctx context.Context, force bool) error {
	api := h.api(ctx)
	sys, err := h.system(api, "power off")
	if err != nil {
		return err
	}
	state, err := h.power(sys, "power off")
	if err != nil || state == provisioner.PowerOff {
		return err
	}
	rt := schemas.GracefulShutdownResetType
	if force {
		rt = schemas.ForceOffResetType
	}
	return h.reset(api, sys, rt, "power off")
}

// Reboot restarts the host, gracefully unless force; a host that is off is
// turned on.
func (h *host) Reboot(ctx context.Context, force bool) error {
	api := h.api(ctx)
	sys, err := h.system(api, "reboot")
	if err != nil {
		return err
	}
	state, err := h.power(sys, "reboot")
	if err != nil {
		return err
	}
	rt := schemas.GracefulRestartResetType
	switch {
	case state == provisioner.PowerOff:
		rt = schemas.OnResetType
	case force:
		rt = schemas.ForceRestartResetType
	}
	return h.reset(api, sys, rt, "reboot")
}

// action is an entry of a resource's Actions.
type action struct {
	Target     string   `json:"target"`
	ResetTypes []string `json:"ResetType@Redfish.AllowableValues"`
}

// actionOf reads the action called name ("#ComputerSystem.Reset") from a
// resource's JSON; gofish keeps the targets to itself.
func actionOf(raw []byte, name string) action {
	var doc struct {
		Actions map[string]action
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return action{}
	}
	return doc.Actions[name]
}

// reset posts ComputerSystem.Reset, checking the type against the ones the
// system offers when it lists them.
func (h *host) reset(api *gofish.APIClient, sys *schemas.ComputerSystem, rt schemas.ResetType, op string) error {
	a := actionOf(sys.RawData, "#ComputerSystem.Reset")
	if a.Target == "" {
		return newError(h.endpoint, op, provisioner.ErrRefused, "system %s offers no ComputerSystem.Reset action", h.systemPath)
	}
	if len(a.ResetTypes) > 0 && !slices.Contains(a.ResetTypes, string(rt)) {
		return newError(h.endpoint, op, provisioner.ErrRefused, "system %s does not offer reset type %s (it offers %s)",
			h.systemPath, rt, strings.Join(a.ResetTypes, ", "))
	}
	if err := send(api, "POST", a.Target, map[string]any{"ResetType": rt}); err != nil {
		return h.fail(fmt.Sprintf("%s: reset %s", op, rt), err, provisioner.ErrRefused)
	}
	return nil
}

// Boot inserts the media (ejecting what is inserted first), sets the next
// boot to the virtual CD once, and powers the host on, restarting it when
// it was on.
func (h *host) Boot(ctx context.Context, m provisioner.BootMedia) error {
	const op = "boot"
	if m.Image.URL == "" {
		return newError(h.endpoint, op, provisioner.ErrRefused, "no image URL to boot")
	}
	api := h.api(ctx)
	sys, err := h.system(api, op)
	if err != nil {
		return err
	}
	state, err := h.power(sys, op)
	if err != nil {
		return err
	}
	slot, err := h.slot(api, sys, op)
	if err != nil {
		return err
	}
	if inserted(slot) {
		if err := h.eject(api, slot, op); err != nil {
			return err
		}
	}
	if err := h.insert(api, slot, m, op); err != nil {
		return err
	}
	override := map[string]any{"Boot": map[string]any{
		"BootSourceOverrideTarget":  schemas.CdBootSource,
		"BootSourceOverrideEnabled": schemas.OnceBootSourceOverrideEnabled,
	}}
	if err := send(api, "PATCH", sys.ODataID, override); err != nil {
		return h.fail(op+": set the boot override to Cd once", err, provisioner.ErrRefused)
	}
	rt := schemas.OnResetType
	if state == provisioner.PowerOn {
		rt = schemas.ForceRestartResetType
	}
	return h.reset(api, sys, rt, op)
}

// insertMedia is the body of VirtualMedia.InsertMedia: the image's URL,
// nothing else of it (a BMC takes no checksum, format or host data).
type insertMedia struct {
	Image          string
	Inserted       bool
	WriteProtected bool
}

// insert posts VirtualMedia.InsertMedia, or PATCHes the slot when it offers
// no such action.
func (h *host) insert(api *gofish.APIClient, slot *schemas.VirtualMedia, m provisioner.BootMedia, op string) error {
	body := insertMedia{Image: m.Image.URL, Inserted: true, WriteProtected: true}
	var err error
	if target := actionOf(slot.RawData, "#VirtualMedia.InsertMedia").Target; target != "" {
		err = send(api, "POST", target, body)
	} else {
		err = send(api, "PATCH", slot.ODataID, body)
	}
	if err != nil {
		return h.fail(op+": insert media into "+slot.ODataID, err, provisioner.ErrRefused)
	}
	return nil
}

// eject posts VirtualMedia.EjectMedia, or PATCHes the slot empty.
func (h *host) eject(api *gofish.APIClient, slot *schemas.VirtualMedia, op string) error {
	var err error
	if target := actionOf(slot.RawData, "#VirtualMedia.EjectMedia").Target; target != "" {
		err = send(api, "POST", target, map[string]any{})
	} else {
		err = send(api, "PATCH", slot.ODataID, map[string]any{"Image": nil, "Inserted": false})
	}
	if err != nil {
		return h.fail(op+": eject media from "+slot.ODataID, err, provisioner.ErrRefused)
	}
	return nil
}

// inserted reports whether a slot holds media.
func inserted(slot *schemas.VirtualMedia) bool {
	if slot.Inserted != nil {
		return *slot.Inserted
	}
	return slot.Image != ""
}

// EjectMedia ejects any virtual media; nothing inserted is fine.
func (h *host) EjectMedia(ctx context.Context) error {
	const op = "eject media"
	api := h.api(ctx)
	slot, err := h.cachedSlot(api, op)
	if err != nil {
		return err
	}
	if !inserted(slot) {
		return nil
	}
	return h.eject(api, slot, op)
}

// Media reports the virtual CD.
func (h *host) Media(ctx context.Context) (provisioner.MediaState, error) {
	slot, err := h.cachedSlot(h.api(ctx), "media")
	if err != nil {
		return provisioner.MediaState{}, err
	}
	return provisioner.MediaState{Inserted: inserted(slot), Image: slot.Image}, nil
}
