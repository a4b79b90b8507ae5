package redfish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"github.com/stmcginnis/gofish/schemas"
	"sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// Inspect reads the host's inventory: the system, its processors, Ethernet
// interfaces and drives (Storage, else SimpleStorage), and its memory when
// the system gives no summary.
//
// Only what the lifecycle needs is required: the system, a power state it
// reports and its ComputerSystem.Reset action; without them Inspect fails
// naming what is missing. The rest is inventory. A part the BMC does not
// link is left empty; one it links but answers with a client error (a
// dangling link: 404, or 400, 405, 501: it has none to give), or with
// JSON that does not fit the schema, is left empty too and recorded:
// Inspect logs, through the context's logger, which parts are missing and
// why, and so does a CPU count or memory size it could not find.
// Credentials refused, a server error or no answer while reading any part
// fail the inspection, naming the part, so that a BMC failing for a moment
// does not leave a host with a partial inventory for good.
func (h *host) Inspect(ctx context.Context) (*metal3v1alpha1.HardwareDetails, error) {
	const op = "inspect"
	api := h.api(ctx)
	sys, err := h.system(api, op)
	if err != nil {
		return nil, err
	}
	if err := h.required(sys, op); err != nil {
		return nil, err
	}
	d := &metal3v1alpha1.HardwareDetails{
		SystemVendor: metal3v1alpha1.HardwareSystemVendor{
			Manufacturer: sys.Manufacturer,
			ProductName:  sys.Model,
			SerialNumber: sys.SerialNumber,
		},
		Firmware: metal3v1alpha1.Firmware{BIOS: metal3v1alpha1.BIOS{Version: sys.BiosVersion}},
		Hostname: sys.HostName,
	}
	inv := &inventory{h: h, op: op}

	procs, err := sys.Processors()
	if err := inv.optional("the processors", err); err != nil {
		return nil, err
	}
	d.CPU = cpuOf(sys.ProcessorSummary, procs)
	if d.CPU.Count == 0 {
		inv.missing = append(inv.missing, "the CPU count (neither ProcessorSummary nor Processors gives it)")
	}

	if d.RAMMebibytes, err = inv.ram(sys); err != nil {
		return nil, err
	}
	if d.RAMMebibytes == 0 {
		inv.missing = append(inv.missing, "the memory size (neither MemorySummary nor Memory gives it)")
	}

	nics, err := sys.EthernetInterfaces()
	if err := inv.optional("the Ethernet interfaces", err); err != nil {
		return nil, err
	}
	for _, n := range nics {
		d.NIC = append(d.NIC, nicOf(n))
	}

	if d.Storage, err = inv.disks(sys); err != nil {
		return nil, err
	}
	if len(inv.missing) > 0 {
		log.FromContext(ctx).Info("the BMC does not give all of the host's inventory: the missing parts are left empty in status.hardware",
			"endpoint", h.endpoint, "system", h.systemPath, "missing", inv.missing)
	}
	return d, nil
}

// required checks the system has what the lifecycle needs of it besides
// its inventory: a power state and the Reset action.
func (h *host) required(sys *schemas.ComputerSystem, op string) error {
	if _, err := h.power(sys, op); err != nil {
		return err
	}
	if actionOf(sys.RawData, "#ComputerSystem.Reset").Target == "" {
		return newError(h.endpoint, op, provisioner.ErrRefused,
			"system %s offers no ComputerSystem.Reset action (Actions[\"#ComputerSystem.Reset\"].target): the host cannot be powered on or off", h.systemPath)
	}
	return nil
}

// inventory is one inspection's reading of optional parts: what is
// missing, in words for the log.
type inventory struct {
	h       *host
	op      string
	missing []string
}

// optional classifies the error of reading an optional part: nil when
// there was none, or when the BMC answered that it has no such part (it is
// recorded as missing); otherwise the inspection's error, naming the part.
func (inv *inventory) optional(what string, err error) error {
	if err == nil {
		return nil
	}
	e := inv.h.fail(inv.op+": read "+what, err, provisioner.ErrRefused)
	var re *Error
	switch {
	case errors.As(e, &re) && absent(re.Status):
		inv.missing = append(inv.missing, fmt.Sprintf("%s (HTTP %d %s)", what, re.Status, http.StatusText(re.Status)))
		return nil
	case undecodable(err):
		inv.missing = append(inv.missing, what+" (an answer that is not the Redfish JSON expected)")
		return nil
	}
	return e
}

// undecodable reports whether err, or a failure of the collection it
// reports, is an answer whose JSON does not fit the schema (sushy-tools'
// libvirt driver serves a processor's TotalThreads as a string): the BMC
// answered, with nothing usable.
func undecodable(err error) bool {
	errs := []error{err}
	var coll *schemas.CollectionError
	if errors.As(err, &coll) {
		for _, ferr := range coll.Failures {
			errs = append(errs, ferr)
		}
	}
	for _, err := range errs {
		var (
			syntax  *json.SyntaxError
			typeErr *json.UnmarshalTypeError
		)
		if errors.As(err, &syntax) || errors.As(err, &typeErr) {
			return true
		}
	}
	return false
}

// absent reports whether a status says the BMC has no such resource to
// give, rather than that it failed or refused the credentials.
func absent(status int) bool {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusTooManyRequests:
		return false
	case http.StatusNotImplemented:
		return true
	}
	return status >= 400 && status < 500
}

// cpuOf summarises the CPUs. Count is the logical processors (threads), as
// upstream inspection reports it: the sum of the CPUs' TotalThreads, else
// the summary's LogicalProcessorCount, else its Count.
func cpuOf(summary schemas.ProcessorSummary, procs []*schemas.Processor) metal3v1alpha1.CPU {
	var cpus []*schemas.Processor
	for _, p := range procs {
		if p.ProcessorType == "" || p.ProcessorType == schemas.CPUProcessorType {
			cpus = append(cpus, p)
		}
	}
	cpu := metal3v1alpha1.CPU{Model: summary.Model}
	threads, threadsKnown := 0, len(cpus) > 0
	for _, p := range cpus {
		if p.TotalThreads == nil {
			threadsKnown = false
			break
		}
		threads += *p.TotalThreads
	}
	switch {
	case threadsKnown && threads > 0:
		cpu.Count = threads
	case summary.LogicalProcessorCount != nil && *summary.LogicalProcessorCount > 0:
		cpu.Count = int(*summary.LogicalProcessorCount)
	case summary.Count != nil:
		cpu.Count = int(*summary.Count)
	default:
		cpu.Count = len(cpus)
	}
	if len(cpus) == 0 {
		return cpu
	}
	first := cpus[0]
	cpu.Arch = archOf(first.InstructionSet, first.ProcessorArchitecture)
	if cpu.Model == "" {
		cpu.Model = first.Model
	}
	switch {
	case first.MaxSpeedMHz != nil && *first.MaxSpeedMHz > 0:
		cpu.ClockMegahertz = metal3v1alpha1.ClockSpeed(*first.MaxSpeedMHz)
	case first.OperatingSpeedMHz != nil:
		cpu.ClockMegahertz = metal3v1alpha1.ClockSpeed(*first.OperatingSpeedMHz)
	}
	return cpu
}

// archOf names an architecture as Linux does (x86_64, aarch64), from the
// instruction set when given, else the architecture.
func archOf(set schemas.InstructionSet, arch schemas.ProcessorArchitecture) string {
	bySet := map[schemas.InstructionSet]string{
		schemas.X8664InstructionSet:    "x86_64",
		schemas.X86InstructionSet:      "i686",
		schemas.ARMA64InstructionSet:   "aarch64",
		schemas.ARMA32InstructionSet:   "arm",
		schemas.IA64InstructionSet:     "ia64",
		schemas.MIPS64InstructionSet:   "mips64",
		schemas.MIPS32InstructionSet:   "mips",
		schemas.PowerISAInstructionSet: "ppc64le",
		schemas.RV64InstructionSet:     "riscv64",
		schemas.RV32InstructionSet:     "riscv32",
	}
	if a, ok := bySet[set]; ok {
		return a
	}
	byArch := map[schemas.ProcessorArchitecture]string{
		schemas.X86ProcessorArchitecture:   "x86_64",
		schemas.ARMProcessorArchitecture:   "aarch64",
		schemas.IA64ProcessorArchitecture:  "ia64",
		schemas.MIPSProcessorArchitecture:  "mips",
		schemas.PowerProcessorArchitecture: "ppc64le",
		schemas.RISCVProcessorArchitecture: "riscv64",
	}
	if a, ok := byArch[arch]; ok {
		return a
	}
	if set != "" {
		return string(set)
	}
	return string(arch)
}

// ram is the memory in MiB: the system's summary, else the sum of its
// memory modules.
func (inv *inventory) ram(sys *schemas.ComputerSystem) (int, error) {
	if gib := sys.MemorySummary.TotalSystemMemoryGiB; gib != nil && *gib > 0 {
		return int(math.Round(*gib * 1024)), nil
	}
	mods, err := sys.Memory()
	if err := inv.optional("the memory", err); err != nil {
		return 0, err
	}
	mib := 0
	for _, m := range mods {
		if m.CapacityMiB != nil {
			mib += *m.CapacityMiB
		}
	}
	return mib, nil
}

// nicOf is one Ethernet interface: its Id (else Name), MAC, first address
// (IPv4 first, no link-local IPv6) and speed.
func nicOf(n *schemas.EthernetInterface) metal3v1alpha1.NIC {
	nic := metal3v1alpha1.NIC{Name: n.ID, MAC: strings.ToLower(n.MACAddress)}
	if nic.Name == "" {
		nic.Name = n.Name
	}
	if nic.MAC == "" {
		nic.MAC = strings.ToLower(n.PermanentMACAddress)
	}
	for _, a := range n.IPv4Addresses {
		if a.Address != "" {
			nic.IP = a.Address
			break
		}
	}
	if nic.IP == "" {
		for _, a := range n.IPv6Addresses {
			if a.Address != "" && !strings.HasPrefix(strings.ToLower(a.Address), "fe80:") {
				nic.IP = a.Address
				break
			}
		}
	}
	if n.SpeedMbps != nil {
		nic.SpeedGbps = *n.SpeedMbps / 1000
	}
	return nic
}

// disks are the drives of the system's Storage, else the devices of its
// SimpleStorage.
func (inv *inventory) disks(sys *schemas.ComputerSystem) ([]metal3v1alpha1.Storage, error) {
	storages, err := sys.Storage()
	if err := inv.optional("the storage", err); err != nil {
		return nil, err
	}
	var out []metal3v1alpha1.Storage
	for _, s := range storages {
		drives, err := s.Drives()
		if err := inv.optional("the drives of "+s.ODataID, err); err != nil {
			return nil, err
		}
		for _, d := range drives {
			out = append(out, diskOf(d))
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	simple, err := sys.SimpleStorage()
	if err := inv.optional("the simple storage", err); err != nil {
		return nil, err
	}
	for _, s := range simple {
		for _, dev := range s.Devices {
			disk := metal3v1alpha1.Storage{Name: dev.Name, Vendor: dev.Manufacturer, Model: dev.Model}
			if dev.CapacityBytes != nil {
				disk.SizeBytes = metal3v1alpha1.Capacity(*dev.CapacityBytes) //nolint:gosec // a disk size fits
			}
			out = append(out, disk)
		}
	}
	return out, nil
}

// diskOf is one drive: its Name (else Id), size, kind, vendor, model and
// serial number.
func diskOf(d *schemas.Drive) metal3v1alpha1.Storage {
	disk := metal3v1alpha1.Storage{
		Name:         d.Name,
		Vendor:       d.Manufacturer,
		Model:        d.Model,
		SerialNumber: d.SerialNumber,
	}
	if disk.Name == "" {
		disk.Name = d.ID
	}
	if d.CapacityBytes != nil {
		disk.SizeBytes = metal3v1alpha1.Capacity(*d.CapacityBytes)
	}
	switch {
	case d.Protocol == schemas.NVMeProtocol:
		disk.Type = metal3v1alpha1.NVME
	case d.MediaType == schemas.SSDMediaType:
		disk.Type = metal3v1alpha1.SSD
	case d.MediaType == schemas.HDDMediaType || d.MediaType == schemas.SMRMediaType:
		disk.Type = metal3v1alpha1.HDD
	case d.RotationSpeedRPM != nil && *d.RotationSpeedRPM > 0:
		disk.Type = metal3v1alpha1.HDD
	}
	disk.Rotational = disk.Type == metal3v1alpha1.HDD
	return disk
}
