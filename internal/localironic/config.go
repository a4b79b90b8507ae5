package localironic

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// setting is one line of ironic.conf.
type setting struct {
	section, key, value string
}

// section order of ironic.conf.
var sections = []string{
	"DEFAULT", "api", "json_rpc", "database", "conductor", "deploy", "agent", "dhcp",
	"redfish", "pxe", "service_catalog", "oslo_concurrency",
}

// confInput is what ironic.conf is made of.
type confInput struct {
	opts     Options
	paths    paths
	apiURL   string
	httpURL  string
	apiPort  int
	httpFile string // the htpasswd file, for http_basic
	// conductors are the conductors' addresses (conductorAddrs); with
	// more than one, rpcPort and rpc are JSON-RPC's port and user.
	conductors []string
	rpcPort    int
	rpc        rpcCredentials
}

// renderConfig returns ironic.conf for in: the all-in-one ironic process
// (API and conductor, no message bus), sqlite, Redfish hardware only, no
// DHCP or network service, and images served from the state directory.
func renderConfig(in confInput) (string, error) {
	list, err := settings(in)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString("# Written by airshipctl (internal/localironic) on every start; edits are lost.\n")
	for _, sec := range sections {
		header := false
		for _, s := range list {
			if s.section != sec {
				continue
			}
			if !header {
				fmt.Fprintf(&b, "\n[%s]\n", sec)
				header = true
			}
			fmt.Fprintf(&b, "%s = %s\n", s.key, s.value)
		}
	}
	return b.String(), nil
}

// settings lists every line of ironic.conf, section by section.
func settings(in confInput) ([]setting, error) {
	o, p := in.opts, in.paths
	list := defaultSection(o, p, in.httpFile)
	list = append(list, rpcSettings(in)...)
	list = append(list,
		setting{"api", "host_ip", o.Host},
		setting{"api", "port", strconv.Itoa(in.apiPort)},
		setting{"database", "connection", "sqlite:///" + p.database()},
		setting{"conductor", "automated_clean", "true"},
		// The BareMetalHost controller owns the power state (spec.online):
		// a host powered on or off behind Ironic's back is recorded, not
		// forced back, as Metal3's own Ironic is configured.
		setting{"conductor", "force_power_state_during_sync", "false"},
		setting{"deploy", "http_url", in.httpURL},
		setting{"deploy", "http_root", p.httpRoot()},
		setting{"deploy", "erase_devices_priority", "0"},
		setting{"deploy", "erase_devices_metadata_priority", "10"},
		setting{"deploy", "fast_track", "false"},
		setting{"deploy", "ramdisk_image_download_source", "http"},
		setting{"deploy", "iso_master_path", p.cache("master_iso_images")},
		setting{"agent", "image_download_source", "local"},
		setting{"agent", "deploy_logs_collect", "never"},
		setting{"dhcp", "dhcp_provider", "none"},
		setting{"redfish", "use_swift", "false"},
		setting{"pxe", "images_path", p.cache("images")},
		setting{"pxe", "instance_master_path", p.cache("master_images")},
		setting{"service_catalog", "endpoint_override", in.apiURL},
		setting{"oslo_concurrency", "lock_path", p.locks()},
	)
	tuned, err := tuningSettings(o.Tuning)
	if err != nil {
		return nil, err
	}
	return append(list, tuned...), nil
}

func defaultSection(o Options, p paths, htpasswd string) []setting {
	list := []setting{
		{"DEFAULT", "auth_strategy", string(o.Auth)},
	}
	if o.Auth == AuthHTTPBasic {
		list = append(list, setting{"DEFAULT", "http_basic_auth_user_file", htpasswd})
	}
	list = append(list,
		setting{"DEFAULT", "my_ip", o.Host},
		setting{"DEFAULT", "state_path", p.root},
		setting{"DEFAULT", "tempdir", p.tmp()},
		setting{"DEFAULT", "log_file", p.log()},
		setting{"DEFAULT", "debug", strconv.FormatBool(o.Debug)},
		setting{"DEFAULT", "force_raw_images", "true"},
	)
	iface := func(kind, def string, enabled ...string) {
		if o.FakeHardware {
			enabled = append(enabled, "fake")
		}
		list = append(list, setting{"DEFAULT", "enabled_" + kind + "_interfaces", strings.Join(enabled, ",")})
		if def != "" {
			list = append(list, setting{"DEFAULT", "default_" + kind + "_interface", def})
		}
	}
	types := "redfish"
	if o.FakeHardware {
		types += ",fake-hardware"
	}
	list = append(list, setting{"DEFAULT", "enabled_hardware_types", types})
	iface("boot", "", "redfish-virtual-media")
	iface("deploy", "direct", "direct", "ramdisk", "custom-agent")
	iface("inspect", "", "redfish", "no-inspect")
	iface("raid", "no-raid", "redfish", "agent", "no-raid")
	iface("bios", "no-bios", "redfish", "no-bios")
	iface("management", "", "redfish")
	iface("power", "", "redfish")
	iface("vendor", "no-vendor", "redfish", "no-vendor")
	list = append(list,
		setting{"DEFAULT", "enabled_network_interfaces", "noop"},
		setting{"DEFAULT", "default_network_interface", "noop"},
	)
	return list
}

// rpcSettings are the transport between the API and the conductors: none
// (one process) or JSON-RPC with HTTP basic auth (conductors.go).
func rpcSettings(in confInput) []setting {
	if len(in.conductors) <= 1 {
		return []setting{{"DEFAULT", "rpc_transport", "none"}, {"DEFAULT", "host", conductorHost}}
	}
	return []setting{
		{"DEFAULT", "rpc_transport", "json-rpc"},
		{"DEFAULT", "host", conductorName(in.conductors, 0)},
		{"json_rpc", "host_ip", in.conductors[0]},
		{"json_rpc", "port", strconv.Itoa(in.rpcPort)},
		{"json_rpc", "auth_strategy", string(AuthHTTPBasic)},
		{"json_rpc", "http_basic_auth_user_file", in.paths.rpcHTPasswd()},
		{"json_rpc", "auth_type", "http_basic"},
		{"json_rpc", "username", in.rpc.user},
		{"json_rpc", "password", in.rpc.password},
	}
}

// conductorHost is the conductor's name in Ironic's database; fixed, so a
// restarted Ironic takes its nodes back.
const conductorHost = "airship-local"

// tuningSettings writes t, checking each value.
func tuningSettings(t Tuning) ([]setting, error) {
	counts := []struct {
		section, key string
		v, min       int
	}{
		{"conductor", "workers_pool_size", t.ConductorWorkers, 3},
		{"conductor", "periodic_max_workers", t.PeriodicMaxWorkers, 1},
		{"conductor", "sync_power_state_workers", t.SyncPowerStateWorkers, 1},
		{"conductor", "max_concurrent_deploy", t.MaxConcurrentDeploy, 1},
		{"conductor", "max_concurrent_clean", t.MaxConcurrentClean, 1},
		{"conductor", "node_locked_retry_attempts", t.NodeLockedRetryAttempts, 1},
		{"redfish", "connection_attempts", t.RedfishConnectionAttempts, 1},
		{"api", "max_limit", t.APIMaxLimit, 1},
	}
	durations := []struct {
		section, key string
		v            time.Duration
		zeroIfBelow  bool // a negative value disables the task (0 in Ironic)
	}{
		{"conductor", "sync_power_state_interval", t.SyncPowerStateInterval, true},
		{"conductor", "check_provision_state_interval", t.CheckProvisionStateInterval, false},
		{"conductor", "deploy_callback_timeout", t.DeployCallbackTimeout, false},
		{"conductor", "clean_callback_timeout", t.CleanCallbackTimeout, false},
		{"conductor", "inspect_wait_timeout", t.InspectWaitTimeout, false},
		{"conductor", "power_state_change_timeout", t.PowerStateChangeTimeout, false},
		{"conductor", "node_locked_retry_interval", t.NodeLockedRetryInterval, false},
		{"redfish", "connection_retry_interval", t.RedfishConnectionRetryInterval, false},
		{"agent", "command_timeout", t.AgentCommandTimeout, false},
		{"api", "ramdisk_heartbeat_timeout", t.RamdiskHeartbeatTimeout, false},
	}
	var list []setting
	for _, c := range counts {
		if c.v < c.min {
			return nil, fmt.Errorf("tuning: [%s] %s is %d, below %d", c.section, c.key, c.v, c.min)
		}
		list = append(list, setting{c.section, c.key, strconv.Itoa(c.v)})
	}
	for _, d := range durations {
		secs := int64(math.Ceil(d.v.Seconds()))
		switch {
		case d.v < 0 && d.zeroIfBelow:
			secs = 0
		case d.v < 0:
			return nil, fmt.Errorf("tuning: [%s] %s is negative (%s)", d.section, d.key, d.v)
		}
		list = append(list, setting{d.section, d.key, strconv.FormatInt(secs, 10)})
	}
	return list, nil
}
