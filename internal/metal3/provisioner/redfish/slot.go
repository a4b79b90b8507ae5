package redfish

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// cachedSlot reads the host's virtual CD, reading the system only when the
// slot's path is not known yet.
func (h *host) cachedSlot(api *gofish.APIClient, op string) (*schemas.VirtualMedia, error) {
	if slot, ok, err := h.knownSlot(api, op); ok || err != nil {
		return slot, err
	}
	sys, err := h.system(api, op)
	if err != nil {
		return nil, err
	}
	return h.findSlot(api, sys, op)
}

// slot reads the virtual CD of a system already read.
func (h *host) slot(api *gofish.APIClient, sys *schemas.ComputerSystem, op string) (*schemas.VirtualMedia, error) {
	if slot, ok, err := h.knownSlot(api, op); ok || err != nil {
		return slot, err
	}
	return h.findSlot(api, sys, op)
}

// knownSlot reads the slot whose path the client remembers for this system;
// ok is false when none is remembered or it is gone.
func (h *host) knownSlot(api *gofish.APIClient, op string) (*schemas.VirtualMedia, bool, error) {
	if h.systemPath == "" {
		return nil, false, nil
	}
	v, ok := h.c.slots.Load(h.systemPath)
	if !ok {
		return nil, false, nil
	}
	path := v.(string)
	slot, err := schemas.GetVirtualMedia(api, path)
	switch {
	case err == nil:
		return slot, true, nil
	case isNotFound(err):
		h.c.slots.Delete(h.systemPath)
		return nil, false, nil
	default:
		return nil, false, h.fail(op+": read virtual media "+path, err, provisioner.ErrRefused)
	}
}

func isNotFound(err error) bool {
	var re *schemas.Error
	return errors.As(err, &re) && re.HTTPReturnedStatusCode == http.StatusNotFound
}

// findSlot looks for the CD/DVD slot: on the system's first ManagedBy
// manager (else the BMC's only manager), then on the system itself.
func (h *host) findSlot(api *gofish.APIClient, sys *schemas.ComputerSystem, op string) (*schemas.VirtualMedia, error) {
	mgrPath, err := h.manager(api, sys, op)
	if err != nil {
		return nil, err
	}
	mgr, err := schemas.GetManager(api, mgrPath)
	if err != nil {
		return nil, h.fail(op+": read manager "+mgrPath, err, provisioner.ErrRefused)
	}
	media, err := mgr.VirtualMedia()
	if err != nil {
		return nil, h.fail(op+": list the virtual media of "+mgrPath, err, provisioner.ErrRefused)
	}
	slot := pickCD(media)
	if slot == nil {
		sysMedia, err := sys.VirtualMedia()
		if err != nil {
			return nil, h.fail(op+": list the virtual media of "+h.systemPath, err, provisioner.ErrRefused)
		}
		slot = pickCD(sysMedia)
	}
	if slot == nil {
		return nil, newError(h.endpoint, op, provisioner.ErrRefused, "neither manager %s nor system %s has a CD or DVD virtual media slot", mgrPath, h.systemPath)
	}
	h.c.slots.Store(h.systemPath, slot.ODataID)
	return slot, nil
}

// manager is the path of the manager whose virtual media the host uses.
func (h *host) manager(api *gofish.APIClient, sys *schemas.ComputerSystem, op string) (string, error) {
	var doc struct {
		Links struct {
			ManagedBy schemas.Links
		}
	}
	if err := json.Unmarshal(sys.RawData, &doc); err == nil {
		for _, l := range doc.Links.ManagedBy {
			if l != "" {
				return l.String(), nil
			}
		}
	}
	root, err := h.serviceRoot(api, op)
	if err != nil {
		return "", err
	}
	if root.Managers == "" {
		return "", newError(h.endpoint, op, provisioner.ErrRefused, "system %s links no manager and the service root links no Managers", h.systemPath)
	}
	coll, err := schemas.GetCollection(api, root.Managers.String())
	if err != nil {
		return "", h.fail(op+": list the managers", err, provisioner.ErrRefused)
	}
	if len(coll.ItemLinks) != 1 {
		return "", newError(h.endpoint, op, provisioner.ErrRefused, "system %s links no manager and the BMC has %d", h.systemPath, len(coll.ItemLinks))
	}
	return coll.ItemLinks[0], nil
}

// pickCD is the first slot that takes a CD or DVD.
func pickCD(media []*schemas.VirtualMedia) *schemas.VirtualMedia {
	isCD := func(t schemas.VirtualMediaType) bool {
		return t == schemas.CDVirtualMediaType || t == schemas.DVDVirtualMediaType
	}
	for _, m := range media {
		if slices.ContainsFunc(m.MediaTypes, isCD) || isCD(m.MediaType) {
			return m
		}
	}
	return nil
}
