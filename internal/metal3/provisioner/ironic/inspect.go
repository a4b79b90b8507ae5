package ironic

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/inventory"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/ports"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// Inspect runs Ironic's out-of-band (redfish) inspection once, or again
// with Refresh, and reads the hardware details from the node's
// properties, its ports and, where Ironic stored one, its inventory.
func (p *ironicHost) Inspect(ctx context.Context, d provisioner.InspectData) (provisioner.Result, *metal3v1alpha1.HardwareDetails, error) {
	n, err := p.node(ctx)
	if err != nil {
		res, err := p.orBusy(err)
		return res, nil, err
	}
	switch nodes.ProvisionState(n.ProvisionState) {
	case nodes.Available:
		// Inspection starts from manageable.
		res, err := p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetManage})
		return res, nil, err
	case nodes.Inspecting, nodes.InspectWait, nodes.Enroll, nodes.Verifying:
		res, err := p.wait(ctx, n)
		return res, nil, err
	case nodes.InspectFail:
		if p.firstReport(n) {
			return p.failed("inspection failed: " + lastError(n, "no reason given")), nil, nil
		}
		res, err := p.startInspection(ctx, n, d.Refresh)
		return res, nil, err
	case nodes.Manageable:
		if p.needInspection(n, d.Refresh) {
			res, err := p.startInspection(ctx, n, d.Refresh)
			return res, nil, err
		}
	default:
		if n.InspectionFinishedAt == nil {
			return p.failed(fmt.Sprintf("Ironic cannot inspect node %s in provision state %q", nodeName(p.host), n.ProvisionState)), nil, nil
		}
	}
	details, err := p.hardwareDetails(ctx, n)
	if err != nil {
		res, err := p.orBusy(err)
		return res, nil, err
	}
	return provisioner.Result{}, details, nil
}

// needInspection: never inspected, or Refresh and no inspection this
// process started for it has finished since. A Refresh answered as done
// forgets its inspection: the controller drops the annotation then, and a
// later annotation is a new request.
func (p *ironicHost) needInspection(n *nodes.Node, refresh bool) bool {
	if !refresh {
		return n.InspectionFinishedAt == nil
	}
	p.f.mu.Lock()
	defer p.f.mu.Unlock()
	started, ok := p.f.inspected[n.UUID]
	if !ok || n.InspectionFinishedAt == nil || n.InspectionFinishedAt.Before(started) {
		return true
	}
	delete(p.f.inspected, n.UUID)
	return false
}

// startInspection starts an inspection; one asked with refresh is
// remembered (needInspection).
func (p *ironicHost) startInspection(ctx context.Context, n *nodes.Node, refresh bool) (provisioner.Result, error) {
	if n.InspectInterface != "redfish" {
		if _, err := p.update(ctx, n, nodes.UpdateOpts{nodes.UpdateOperation{Op: nodes.ReplaceOp, Path: "/inspect_interface", Value: "redfish"}}); err != nil {
			return p.orBusy(err)
		}
	}
	// A second earlier: Ironic's timestamps have a second's precision.
	started := time.Now().Add(-time.Second)
	res, err := p.setState(ctx, n, nodes.ProvisionStateOpts{Target: nodes.TargetInspect})
	if err == nil && res.Dirty && refresh {
		p.f.mu.Lock()
		p.f.inspected[n.UUID] = started
		p.f.mu.Unlock()
	}
	return res, err
}

// hardwareDetails reads the node's ports and inventory (404 when Ironic
// stored none: its redfish inspection does not) and maps them.
func (p *ironicHost) hardwareDetails(ctx context.Context, n *nodes.Node) (*metal3v1alpha1.HardwareDetails, error) {
	ps, err := p.listPorts(ctx, n.UUID, "")
	if err != nil {
		return nil, err
	}
	var inv *inventory.InventoryType
	data, err := nodes.GetInventory(ctx, p.f.client, n.UUID).Extract()
	switch err = p.classify(err, p.what("get the inventory of")); {
	case err == nil:
		inv = &data.Inventory
	case errors.Is(err, errNotFound):
	default:
		return nil, err
	}
	hw := details(n.Properties, ps, inv)
	if inv == nil {
		p.addBMCDetails(ctx, hw)
	}
	return hw, nil
}

// addBMCDetails adds what the host's BMC reports (Options.BMCs) to hw. A
// BMC that does not answer costs this host only its own bounded request,
// and leaves Ironic's details as they are: they are enough to provision.
func (p *ironicHost) addBMCDetails(ctx context.Context, hw *metal3v1alpha1.HardwareDetails) {
	if p.f.opts.BMCs == nil {
		return
	}
	bmc, err := p.f.opts.BMCs.Open(ctx, p.host.BMC)
	if err != nil {
		log.FromContext(ctx).Info("hardware details from Ironic only: opening the BMC failed", "error", p.scrubText(err.Error()))
		return
	}
	from, err := bmc.Inspect(ctx)
	if err != nil {
		log.FromContext(ctx).Info("hardware details from Ironic only: the BMC's inventory could not be read", "error", p.scrubText(err.Error()))
		return
	}
	mergeBMCDetails(hw, from)
}

// mergeBMCDetails fills what Ironic's redfish inspection leaves empty in hw
// from the BMC's inventory: each NIC's name, address, speed and model (by
// MAC; NICs Ironic has no port for are added), the disks (when Ironic has
// only a size), the CPU's model and clock, the system's product and serial
// number, the firmware and the hostname.
func mergeBMCDetails(hw, bmc *metal3v1alpha1.HardwareDetails) {
	if bmc == nil {
		return
	}
	byMAC := map[string]int{}
	for i, n := range hw.NIC {
		byMAC[strings.ToLower(n.MAC)] = i
	}
	for _, n := range bmc.NIC {
		i, ok := byMAC[strings.ToLower(n.MAC)]
		if !ok {
			n.MAC = strings.ToLower(n.MAC)
			hw.NIC = append(hw.NIC, n)
			continue
		}
		have := &hw.NIC[i]
		have.Name, have.IP, have.SpeedGbps, have.Model, have.VLANs, have.VLANID = n.Name, n.IP, n.SpeedGbps, n.Model, n.VLANs, n.VLANID
	}
	if len(bmc.Storage) > 0 && (len(hw.Storage) == 0 || hw.Storage[0].Name == "") {
		hw.Storage = bmc.Storage
	}
	if hw.CPU.Model == "" {
		hw.CPU.Model, hw.CPU.ClockMegahertz = bmc.CPU.Model, bmc.CPU.ClockMegahertz
	}
	if hw.CPU.Count == 0 {
		hw.CPU.Count = bmc.CPU.Count
	}
	if hw.RAMMebibytes == 0 {
		hw.RAMMebibytes = bmc.RAMMebibytes
	}
	if hw.SystemVendor.Manufacturer == "" {
		hw.SystemVendor.Manufacturer = bmc.SystemVendor.Manufacturer
	}
	hw.SystemVendor.ProductName, hw.SystemVendor.SerialNumber = bmc.SystemVendor.ProductName, bmc.SystemVendor.SerialNumber
	hw.Firmware = bmc.Firmware
	if hw.Hostname == "" {
		hw.Hostname = bmc.Hostname
	}
}

// details maps what Ironic knows of a host to status.hardware: CPU
// count and architecture, RAM, the root disk's size and the vendor from the
// node's properties (what redfish inspection and verification set), NICs
// from its ports, and everything the inventory has over them.
func details(props map[string]any, ps []ports.Port, inv *inventory.InventoryType) *metal3v1alpha1.HardwareDetails {
	hw := &metal3v1alpha1.HardwareDetails{
		CPU:          metal3v1alpha1.CPU{Arch: str(props["cpu_arch"]), Count: num(props["cpus"])},
		RAMMebibytes: num(props["memory_mb"]),
	}
	if gb := num(props["local_gb"]); gb > 0 {
		// Ironic's redfish inspection records the disk's size less 1 GiB.
		hw.Storage = []metal3v1alpha1.Storage{{SizeBytes: metal3v1alpha1.Capacity(int64(gb+1) << 30)}}
	}
	// Ironic records the vendor when it verifies the BMC.
	hw.SystemVendor.Manufacturer = str(props["vendor"])
	for _, port := range ps {
		hw.NIC = append(hw.NIC, metal3v1alpha1.NIC{MAC: strings.ToLower(port.Address), PXE: port.PXEEnabled})
	}
	if inv != nil {
		fromInventory(hw, inv)
	}
	return hw
}

// fromInventory overrides hw with an agent inventory's details.
func fromInventory(hw *metal3v1alpha1.HardwareDetails, inv *inventory.InventoryType) {
	if inv.CPU.Count > 0 {
		hw.CPU = metal3v1alpha1.CPU{Arch: inv.CPU.Architecture, Model: inv.CPU.ModelName, Count: inv.CPU.Count, Flags: inv.CPU.Flags}
		if f, err := inv.CPU.RealFrequency.Float64(); err == nil {
			hw.CPU.ClockMegahertz = metal3v1alpha1.ClockSpeed(math.Round(f))
		}
	}
	if inv.Memory.PhysicalMb > 0 {
		hw.RAMMebibytes = inv.Memory.PhysicalMb
	}
	if len(inv.Disks) > 0 {
		hw.Storage = nil
		for _, d := range inv.Disks {
			s := metal3v1alpha1.Storage{Name: d.Name, Rotational: d.Rotational, SizeBytes: metal3v1alpha1.Capacity(d.Size),
				Vendor: d.Vendor, Model: d.Model, SerialNumber: d.Serial, WWN: d.Wwn, HCTL: d.Hctl}
			if d.ByPath != "" {
				s.AlternateNames = []string{d.Name}
				s.Name = d.ByPath
			}
			hw.Storage = append(hw.Storage, s)
		}
	}
	if len(inv.Interfaces) > 0 {
		hw.NIC = nil
		for _, i := range inv.Interfaces {
			hw.NIC = append(hw.NIC, metal3v1alpha1.NIC{Name: i.Name, MAC: strings.ToLower(i.MACAddress), IP: i.IPV4Address,
				SpeedGbps: i.SpeedMbps / 1000, Model: strings.TrimSpace(i.Vendor + " " + i.Product),
				PXE: i.Name == inv.Boot.PXEInterface || i.MACAddress == inv.Boot.PXEInterface})
		}
	}
	sv := inv.SystemVendor
	if sv.Manufacturer != "" {
		hw.SystemVendor.Manufacturer = sv.Manufacturer
	}
	hw.SystemVendor.ProductName, hw.SystemVendor.SerialNumber = sv.ProductName, sv.SerialNumber
	hw.Firmware.BIOS = metal3v1alpha1.BIOS{Vendor: sv.Firmware.Vendor, Version: sv.Firmware.Version, Date: sv.Firmware.BuildDate}
	hw.Hostname = inv.Hostname
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

// num reads a property Ironic stores as a number or a string of one.
func num(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case int:
		return x
	case string:
		i, err := strconv.Atoi(strings.TrimSpace(x))
		if err != nil {
			return 0
		}
		return i
	}
	return 0
}
