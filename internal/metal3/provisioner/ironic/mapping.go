package ironic

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/baremetal/v1/nodes"
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	"sigs.k8s.io/yaml"

	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// Ironic's interfaces and values this package sets.
const (
	driverRedfish        = "redfish"
	bootVirtualMedia     = "redfish-virtual-media"
	deployDirect         = "direct"
	deployRamdisk        = "ramdisk"
	deployCustomAgent    = "custom-agent"
	customDeployPriority = 80
	// softPowerOffTimeout is how long a soft power off may take (seconds).
	softPowerOffTimeout = 180
	formatLiveISO       = "live-iso"
)

// nodeName is Ironic's name of a host's node, as upstream's.
func nodeName(h provisioner.Host) string { return h.Namespace + "~" + h.Name }

// driverInfo is the node's driver_info for a host. It holds the BMC
// password: never log it, never put it in an error.
func driverInfo(t provisioner.Target, o Options) map[string]any {
	di := map[string]any{
		"redfish_address":  t.Access.Endpoint,
		"redfish_username": t.Credentials.Username,
		"redfish_password": t.Credentials.Password,
		// The agent cannot power a virtual host off itself.
		"deploy_forces_oob_reboot": true,
	}
	if t.Access.SystemPath != "" {
		di["redfish_system_id"] = t.Access.SystemPath
	}
	if t.InsecureSkipVerify {
		di["redfish_verify_ca"] = false
	}
	if o.DeployISO != "" {
		di["deploy_iso"] = o.DeployISO
	}
	if o.DeployISO == "" && o.DeployKernel != "" && o.DeployRamdisk != "" {
		di["deploy_kernel"] = o.DeployKernel
		di["deploy_ramdisk"] = o.DeployRamdisk
	}
	if o.ImageDownloadSource != "" {
		di["image_download_source"] = o.ImageDownloadSource
	}
	return di
}

// driverInfoMatches reports whether the node's driver_info has the
// address, system, user, verification and deploy ISO of want (the
// password is masked in Ironic's answers and not compared).
func driverInfoMatches(have, want map[string]any) bool {
	for _, k := range []string{"redfish_address", "redfish_system_id", "redfish_username", "redfish_verify_ca", "deploy_iso", "deploy_kernel", "deploy_ramdisk", "deploy_forces_oob_reboot", "image_download_source"} {
		if !jsonEqual(have[k], want[k]) {
			return false
		}
	}
	return true
}

// automatedClean is the node's automated_clean for a cleaning mode.
func automatedClean(m metal3v1alpha1.AutomatedCleaningMode) bool {
	return m != metal3v1alpha1.CleaningModeDisabled
}

var bootModeCapability = map[metal3v1alpha1.BootMode]string{
	metal3v1alpha1.UEFI:           "boot_mode:uefi",
	metal3v1alpha1.UEFISecureBoot: "boot_mode:uefi,secure_boot:true",
	metal3v1alpha1.Legacy:         "boot_mode:bios",
}

// capabilities returns the node's properties.capabilities with the boot
// mode of m, keeping the other capabilities (inspection adds some).
func capabilities(existing any, m metal3v1alpha1.BootMode) string {
	want, ok := bootModeCapability[m]
	if !ok {
		want = bootModeCapability[metal3v1alpha1.UEFI]
	}
	s, _ := existing.(string)
	var keep []string
	for _, item := range strings.Split(s, ",") {
		if item == "" || strings.HasPrefix(item, "boot_mode:") || strings.HasPrefix(item, "secure_boot:") {
			continue
		}
		keep = append(keep, item)
	}
	return strings.Join(append(keep, want), ",")
}

// createOpts is the node Register creates for a host.
func createOpts(h provisioner.Host, d provisioner.RegisterData, o Options) nodes.CreateOpts {
	clean := automatedClean(d.AutomatedCleaningMode)
	deploy := deployDirect
	switch {
	case d.HasCustomDeploy:
		deploy = deployCustomAgent
	case d.CurrentImage.IsLiveISO():
		deploy = deployRamdisk
	}
	return nodes.CreateOpts{
		Name:       nodeName(h),
		Driver:     driverRedfish,
		DriverInfo: driverInfo(h.BMC, o),
		// Virtual media for both redfish schemes: there is no PXE network.
		BootInterface:       bootVirtualMedia,
		DeployInterface:     deploy,
		InspectInterface:    "redfish",
		ManagementInterface: "redfish",
		PowerInterface:      "redfish",
		RAIDInterface:       "redfish",
		BIOSInterface:       "redfish",
		AutomatedClean:      &clean,
		Properties:          map[string]any{"capabilities": capabilities(nil, h.BootMode)},
	}
}

// rootDeviceHints is Ironic's properties.root_device for the hints, nil
// for none; the operators are upstream's.
func rootDeviceHints(h *metal3v1alpha1.RootDeviceHints) map[string]any {
	if h == nil {
		return nil
	}
	m := map[string]any{}
	set := func(k, op, v string) {
		if v != "" {
			m[k] = op + " " + v
		}
	}
	name := h.DeviceName
	if name != "" && !strings.HasPrefix(name, "/dev/") {
		name = "/dev/" + name
	}
	set("name", "s==", name)
	set("hctl", "s==", h.HCTL)
	set("model", "<in>", h.Model)
	set("vendor", "<in>", h.Vendor)
	set("serial", "s==", h.SerialNumber)
	set("wwn", "s==", h.WWN)
	set("wwn_with_extension", "s==", h.WWNWithExtension)
	set("wwn_vendor_extension", "s==", h.WWNVendorExtension)
	if h.MinSizeGigabytes > 0 {
		m["size"] = fmt.Sprintf(">= %d", h.MinSizeGigabytes)
	}
	if h.Rotational != nil {
		m["rotational"] = *h.Rotational
	}
	if len(m) == 0 {
		return nil
	}
	return m
}

// imageInfo is what instance_info says of an image: source, checksum
// and format. A nil value removes the key. md5 and an unset or auto type
// go to image_checksum (Ironic tells sha256 and sha512 by their length),
// sha256 and sha512 to image_os_hash_algo and image_os_hash_value; a
// checksum that is a URL always goes to image_checksum, the one field
// Ironic 21.4 fetches a checksum file from.
func imageInfo(img *metal3v1alpha1.Image) (map[string]any, error) {
	ii := map[string]any{
		"image_source":        nil,
		"image_checksum":      nil,
		"image_os_hash_algo":  nil,
		"image_os_hash_value": nil,
		"image_disk_format":   nil,
		"boot_iso":            nil,
	}
	if img == nil || img.URL == "" {
		return ii, nil
	}
	if img.IsLiveISO() {
		ii["boot_iso"] = img.URL
		return ii, nil
	}
	ii["image_source"] = img.URL
	if img.DiskFormat != nil && *img.DiskFormat != "" {
		ii["image_disk_format"] = *img.DiskFormat
	}
	if img.Checksum == "" {
		return nil, fmt.Errorf("image %s: spec.image.checksum is required for a %s image", img.URL, formatName(img))
	}
	isURL := strings.HasPrefix(img.Checksum, "http://") || strings.HasPrefix(img.Checksum, "https://")
	switch t := img.ChecksumType; {
	case isURL, t == "", t == metal3v1alpha1.AutoChecksum, t == metal3v1alpha1.MD5:
		ii["image_checksum"] = img.Checksum
	case t == metal3v1alpha1.SHA256, t == metal3v1alpha1.SHA512:
		ii["image_os_hash_algo"] = string(t)
		ii["image_os_hash_value"] = img.Checksum
	default:
		return nil, fmt.Errorf("image %s: spec.image.checksumType %q is not one of md5, sha256, sha512, auto", img.URL, t)
	}
	return ii, nil
}

func formatName(img *metal3v1alpha1.Image) string {
	if img.DiskFormat == nil || *img.DiskFormat == "" {
		return "disk"
	}
	return *img.DiskFormat
}

// deployPlan is what Provision sets on a node before asking for active.
type deployPlan struct {
	// DeployInterface: direct, ramdisk (live ISO) or custom-agent.
	DeployInterface string
	// InstanceInfo: keys to set; nil values are keys to remove.
	InstanceInfo map[string]any
	// DeploySteps of a custom deploy.
	DeploySteps []nodes.DeployStep
	// ConfigDrive: nil for a live ISO.
	ConfigDrive *nodes.ConfigDrive
}

// planDeploy maps ProvisionData to a deploy. An error is the data's fault
// (an ErrorMessage naming the field), not Ironic's.
func planDeploy(d provisioner.ProvisionData) (deployPlan, error) {
	var p deployPlan
	custom := d.CustomDeploy != nil && d.CustomDeploy.Method != ""
	var err error
	switch {
	case custom:
		p.DeployInterface = deployCustomAgent
		p.InstanceInfo, err = imageInfo(nil)
		if d.Image != nil && d.Image.URL != "" {
			// Everything is optional with a custom deploy.
			p.InstanceInfo["image_source"] = d.Image.URL
			if d.Image.Checksum != "" {
				img, cerr := imageInfo(d.Image)
				if cerr == nil {
					p.InstanceInfo = img
				}
			}
		}
		p.DeploySteps = []nodes.DeployStep{{Interface: nodes.InterfaceDeploy, Step: d.CustomDeploy.Method, Args: map[string]any{}, Priority: customDeployPriority}}
	case d.Image == nil || d.Image.URL == "":
		return p, fmt.Errorf("spec.image.url is empty and there is no spec.customDeploy")
	case d.Image.IsLiveISO():
		p.DeployInterface = deployRamdisk
		p.InstanceInfo, err = imageInfo(d.Image)
	default:
		p.DeployInterface = deployDirect
		p.InstanceInfo, err = imageInfo(d.Image)
	}
	if err != nil {
		return p, err
	}
	bootMode := d.BootMode
	if bootMode == "" {
		bootMode = metal3v1alpha1.UEFI
	}
	caps := map[string]any{"boot_mode": "uefi"}
	switch bootMode {
	case metal3v1alpha1.Legacy:
		caps["boot_mode"] = "bios"
	case metal3v1alpha1.UEFISecureBoot:
		caps["secure_boot"] = "true"
	}
	p.InstanceInfo["capabilities"] = caps
	if hints := rootDeviceHints(d.RootDeviceHints); hints != nil {
		p.InstanceInfo["root_device"] = hints
	} else {
		p.InstanceInfo["root_device"] = nil
	}
	if p.DeployInterface == deployRamdisk {
		// Ironic cannot attach a config drive beside a live ISO.
		return p, nil
	}
	cd, err := configDrive(d)
	if err != nil {
		return p, err
	}
	p.ConfigDrive = &cd
	return p, nil
}

// configDrive builds Ironic's config drive dict (API 1.56): meta_data and
// network_data decoded from JSON or YAML, user_data the raw text.
func configDrive(d provisioner.ProvisionData) (nodes.ConfigDrive, error) {
	var cd nodes.ConfigDrive
	if len(d.UserData) > 0 {
		cd.UserData = string(d.UserData)
	}
	if len(d.MetaData) > 0 {
		if err := yaml.Unmarshal(d.MetaData, &cd.MetaData); err != nil {
			return cd, fmt.Errorf("the meta-data is not a JSON or YAML mapping (spec.metaData): %w", err)
		}
	}
	if len(d.NetworkData) > 0 {
		if err := yaml.Unmarshal(d.NetworkData, &cd.NetworkData); err != nil {
			return cd, fmt.Errorf("the network-data is not a JSON or YAML mapping (spec.networkData): %w", err)
		}
	}
	return cd, nil
}

// raidConfig maps spec.raid to Ironic's target_raid_config for the
// redfish RAID interface. ok is false when there is nothing to do. Software
// RAID needs the agent's RAID interface, which a redfish node has not.
func raidConfig(r *metal3v1alpha1.RAIDConfig) (cfg map[string]any, ok bool, err error) {
	if r == nil {
		return nil, false, nil
	}
	if len(r.SoftwareRAIDVolumes) > 0 {
		return nil, false, fmt.Errorf("spec.raid.softwareRAIDVolumes: software RAID needs Ironic's agent RAID interface; the redfish driver supports hardware RAID only")
	}
	if r.HardwareRAIDVolumes == nil {
		return nil, false, nil
	}
	disks := []map[string]any{}
	for i, v := range r.HardwareRAIDVolumes {
		ld := map[string]any{"raid_level": v.Level, "size_gb": "MAX"}
		if v.SizeGibibytes != nil {
			ld["size_gb"] = *v.SizeGibibytes
		}
		if v.Name != "" {
			ld["volume_name"] = v.Name
		}
		if v.Rotational != nil {
			ld["disk_type"] = map[bool]string{true: "hdd", false: "ssd"}[*v.Rotational]
		}
		if v.NumberOfPhysicalDisks != nil {
			ld["number_of_physical_disks"] = *v.NumberOfPhysicalDisks
		}
		if v.Controller != "" {
			ld["controller"] = v.Controller
		}
		if len(v.PhysicalDisks) > 0 {
			ld["physical_disks"] = v.PhysicalDisks
		}
		if i == 0 {
			ld["is_root_volume"] = true
		}
		disks = append(disks, ld)
	}
	return map[string]any{"logical_disks": disks}, true, nil
}

// firmwareSettings refuses spec.firmware: its three settings have
// vendor-specific BIOS attribute names (upstream maps them for iDRAC, iLO
// and iRMC only), and the generic redfish driver has no mapping.
//
//nolint:staticcheck // spec.firmware is deprecated upstream; it is still in the API and refused by name here.
func firmwareSettings(f *metal3v1alpha1.FirmwareConfig) error {
	if f == nil || (f.VirtualizationEnabled == nil && f.SimultaneousMultithreadingEnabled == nil && f.SriovEnabled == nil) {
		return nil
	}
	return fmt.Errorf("spec.firmware: the redfish driver has no BIOS attribute names for virtualizationEnabled, simultaneousMultithreadingEnabled or sriovEnabled (vendor drivers only)")
}

// manualCleanSteps are the clean steps Prepare runs for RAID: delete the
// old configuration, create the target one.
func manualCleanSteps(raid bool) []nodes.CleanStep {
	if !raid {
		return nil
	}
	return []nodes.CleanStep{
		{Interface: nodes.InterfaceRAID, Step: "delete_configuration"},
		{Interface: nodes.InterfaceRAID, Step: "create_configuration"},
	}
}

// patchOps returns the JSON patch setting want's keys under prefix (a nil
// value removes the key where have has it), leaving equal values alone.
func patchOps(prefix string, have, want map[string]any) nodes.UpdateOpts {
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ops nodes.UpdateOpts
	for _, k := range keys {
		v := want[k]
		cur, present := have[k]
		switch {
		case v == nil && present:
			ops = append(ops, nodes.UpdateOperation{Op: nodes.RemoveOp, Path: prefix + "/" + k})
		case v != nil && (!present || !jsonEqual(cur, v)):
			ops = append(ops, nodes.UpdateOperation{Op: nodes.AddOp, Path: prefix + "/" + k, Value: v})
		}
	}
	return ops
}

// jsonEqual compares two values as their JSON forms decode.
func jsonEqual(a, b any) bool {
	return reflect.DeepEqual(normalize(a), normalize(b))
}

func normalize(v any) any {
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(data, &out) != nil {
		return v
	}
	return out
}
