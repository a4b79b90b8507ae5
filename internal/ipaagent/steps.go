package ipaagent

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/airshipit/airship-go/internal/configdrive"
)

// handler runs one command.
type handler struct {
	// sync commands run within the request.
	sync bool
	run  func(ctx context.Context, params json.RawMessage) (any, error)
	// after runs on a goroutine of its own once the command succeeded.
	after func()
}

// hardwareManager names the agent's only hardware manager.
const hardwareManager = "generic_hardware_manager"

// hardwareManagerVersion is what get_*_steps report and *_version echo.
var hardwareManagerVersion = map[string]string{hardwareManager: "1.2"}

// step is a clean or deploy step.
type step struct {
	Step      string         `json:"step"`
	Interface string         `json:"interface"`
	Priority  int            `json:"priority"`
	Args      map[string]any `json:"args,omitempty"`
	Reboot    bool           `json:"reboot_requested"`
	Abortable bool           `json:"abortable,omitempty"`
}

var deploySteps = []step{
	{Step: "erase_devices_metadata", Interface: "deploy"},
	{Step: "write_image", Interface: "deploy"},
}

var cleanSteps = []step{
	{Step: "erase_devices", Interface: "deploy", Priority: 10, Abortable: true},
	{Step: "erase_devices_metadata", Interface: "deploy", Priority: 99, Abortable: true},
}

// stepParams are the params of execute_{deploy,clean}_step.
type stepParams struct {
	Step json.RawMessage `json:"step"`
	Node node            `json:"node"`
}

// node is what the agent reads of the node Ironic sends.
type node struct {
	UUID       string `json:"uuid"`
	Properties struct {
		RootDevice map[string]any `json:"root_device"`
	} `json:"properties"`
}

func (a *Agent) handlers() map[string]handler {
	none := func(context.Context, json.RawMessage) (any, error) { return nil, nil }
	return map[string]handler{
		"deploy.get_deploy_steps": {sync: true, run: func(context.Context, json.RawMessage) (any, error) {
			return map[string]any{"deploy_steps": map[string][]step{"GenericHardwareManager": deploySteps}, "hardware_manager_version": hardwareManagerVersion}, nil
		}},
		"clean.get_clean_steps": {sync: true, run: func(context.Context, json.RawMessage) (any, error) {
			return map[string]any{"clean_steps": map[string][]step{"GenericHardwareManager": cleanSteps}, "hardware_manager_version": hardwareManagerVersion}, nil
		}},
		"deploy.execute_deploy_step": {run: func(ctx context.Context, p json.RawMessage) (any, error) {
			return a.executeStep(ctx, p, "deploy")
		}},
		"clean.execute_clean_step": {run: func(ctx context.Context, p json.RawMessage) (any, error) {
			return a.executeStep(ctx, p, "clean")
		}},
		"standby.get_partition_uuids": {sync: true, run: a.partitionUUIDs},
		"standby.sync":                {sync: true, run: none},
		"image.install_bootloader":    {run: none},
		"standby.power_off":           {run: none, after: a.poweringOff(a.cfg.PowerOff)},
		"standby.run_image":           {run: none, after: a.poweringOff(a.cfg.Reboot)},
	}
}

// poweringOff stops the heartbeats, then calls f.
func (a *Agent) poweringOff(f func()) func() {
	return func() {
		a.mu.Lock()
		a.stopBeat = true
		a.mu.Unlock()
		a.forceHeartbeat() // wakes the loop, which then ends
		if f != nil {
			f()
		}
	}
}

// executeStep runs a deploy or clean step, as IPA's result:
// {kind_result, kind_step}.
func (a *Agent) executeStep(ctx context.Context, raw json.RawMessage, kind string) (any, error) {
	var p stepParams
	if err := json.Unmarshal(raw, &p); err != nil {
		return nil, fmt.Errorf("execute_%s_step: params: %w", kind, err)
	}
	var s struct {
		Step string         `json:"step"`
		Args map[string]any `json:"args"`
	}
	if err := json.Unmarshal(p.Step, &s); err != nil || s.Step == "" {
		return nil, fmt.Errorf("execute_%s_step: malformed %s_step, no \"step\" key", kind, kind)
	}
	var err error
	switch s.Step {
	case "write_image":
		err = a.writeImage(ctx, p.Node, s.Args)
	case "erase_devices_metadata":
		err = a.eraseMetadata()
	case "erase_devices":
		err = a.eraseDevices()
	default:
		err = fmt.Errorf("%s step %s: not supported by the emulated agent", kind, s.Step)
	}
	if err != nil {
		return nil, err
	}
	var echo any
	_ = json.Unmarshal(p.Step, &echo)
	return map[string]any{kind + "_result": nil, kind + "_step": echo}, nil
}

// partitionUUIDs answers standby.get_partition_uuids for the disk last
// written: its table's disk identifier as the root uuid (a whole-disk
// image has no root partition of Ironic's).
func (a *Agent) partitionUUIDs(context.Context, json.RawMessage) (any, error) {
	a.mu.Lock()
	d := a.written
	a.mu.Unlock()
	out := map[string]any{"partitions": map[string]string{}}
	if d == nil {
		return out, nil
	}
	f, err := os.Open(d.Path)
	if err != nil {
		return out, nil
	}
	defer func() { _ = f.Close() }()
	if t, err := configdrive.ReadTable(f, d.Size); err == nil {
		id := t.DiskID
		if t.Kind == "mbr" {
			id = "0x" + id
		}
		out["root uuid"] = id
		parts := map[string]string{}
		for _, p := range t.Partitions {
			if p.UUID != "" {
				parts[fmt.Sprintf("%s%d", d.Name, p.Number)] = p.UUID
			}
		}
		out["partitions"] = parts
	}
	return out, nil
}
