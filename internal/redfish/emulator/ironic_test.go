package emulator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/configdrive"
	"github.com/airshipit/airship-go/internal/configdrive/configdrivetest"
	"github.com/airshipit/airship-go/internal/test/testenv"
)

// ironicAPI is a raw client of Ironic's API at microversion 1.82.
type ironicAPI struct {
	t   *testing.T
	url string
}

func (c ironicAPI) call(method, path string, body any, out any) int {
	c.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, c.url+path, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-OpenStack-Ironic-API-Version", "1.82")
	resp, err := testenv.HTTPClient().Do(req)
	if err != nil {
		c.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		c.t.Fatal(err)
	}
	if resp.StatusCode >= 300 {
		c.t.Fatalf("%s %s: %s: %s", method, path, resp.Status, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			c.t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

type ironicNode struct {
	UUID           string `json:"uuid"`
	ProvisionState string `json:"provision_state"`
	LastError      string `json:"last_error"`
	PowerState     string `json:"power_state"`
}

// provision moves the node to target and waits for want.
func (c ironicAPI) provision(uuid, target, want string, extra map[string]any, limit time.Duration) {
	c.t.Helper()
	body := map[string]any{"target": target}
	for k, v := range extra {
		body[k] = v
	}
	c.call("PUT", "/v1/nodes/"+uuid+"/states/provision", body, nil)
	deadline := time.Now().Add(limit)
	var n ironicNode
	for time.Now().Before(deadline) {
		c.call("GET", "/v1/nodes/"+uuid, nil, &n)
		if n.ProvisionState == want {
			return
		}
		if strings.HasSuffix(n.ProvisionState, "failed") {
			c.t.Fatalf("%s: node %s %s: %s", target, uuid, n.ProvisionState, n.LastError)
		}
		time.Sleep(500 * time.Millisecond)
	}
	c.t.Fatalf("%s: node %s still %s after %s (last error %q)", target, uuid, n.ProvisionState, limit, n.LastError)
}

// TestIronicDeploysWithTheAgent: a real local Ironic cleans, then deploys
// a raw image with a config drive to an emulated host over Redfish and
// the host's deploy agent; the disk file then holds the image and the
// config drive, and the host boots from it.
func TestIronicDeploysWithTheAgent(t *testing.T) {
	inst := testenv.Ironic(t)
	hosts := Generate(1, 1)
	var log syncBuffer
	s, base := start(t, Config{Hosts: hosts, BootDelay: 100 * time.Millisecond}, Options{HeartbeatInterval: 2 * time.Second, Log: &log})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("emulator log:\n%s", log.String())
		}
	})
	api := ironicAPI{t: t, url: inst.APIURL}

	var node ironicNode
	api.call("POST", "/v1/nodes", map[string]any{
		"name": fmt.Sprintf("emu-deploy-%d", time.Now().UnixNano()%1e9), "driver": "redfish",
		"boot_interface": "redfish-virtual-media", "deploy_interface": "direct",
		"driver_info": map[string]any{
			"redfish_address": base, "redfish_system_id": systemsPath + "/host-0000",
			"redfish_username": testUser, "redfish_password": testPassword, "redfish_verify_ca": false,
			"deploy_iso": inst.DeployISOURL,
		},
		"properties": map[string]any{"cpu_arch": "x86_64", "capabilities": "boot_mode:uefi"},
	}, &node)
	t.Cleanup(func() {
		api.call("PATCH", "/v1/nodes/"+node.UUID, []map[string]any{{"op": "replace", "path": "/maintenance", "value": true}}, nil)
		api.call("DELETE", "/v1/nodes/"+node.UUID, nil, nil)
	})
	api.call("POST", "/v1/ports", map[string]any{"node_uuid": node.UUID, "address": hosts[0].NICs[0].MAC}, nil)

	api.provision(node.UUID, "manage", "manageable", nil, 2*time.Minute)
	// Automated cleaning: the deploy ISO, the agent, erase_devices_metadata.
	api.provision(node.UUID, "provide", "available", nil, 5*time.Minute)
	if !strings.Contains(log.String(), "erased the metadata") {
		t.Errorf("cleaning ran no erase_devices_metadata on the host")
	}

	image := testenv.ServeDiskImage(t, inst, "emu-image.raw", 16<<20, testenv.DiskImageOptions{})
	userData := "#cloud-config\nhostname: deployed-0\n"
	api.call("PATCH", "/v1/nodes/"+node.UUID, []map[string]any{
		{"op": "add", "path": "/instance_info/image_source", "value": image.URL},
		{"op": "add", "path": "/instance_info/image_os_hash_algo", "value": "sha256"},
		{"op": "add", "path": "/instance_info/image_os_hash_value", "value": image.SHA256},
		{"op": "add", "path": "/instance_info/image_disk_format", "value": image.Format},
		// The agent downloads the image itself: with "local" the conductor
		// serves it through a symlink under http_root into its cache,
		// which localironic's image server (os.Root) refuses (404).
		{"op": "add", "path": "/instance_info/image_download_source", "value": "http"},
	}, nil)
	api.provision(node.UUID, "active", "active", map[string]any{"configdrive": map[string]any{
		"meta_data": map[string]any{"local-hostname": "deployed-0"},
		"user_data": userData,
	}}, 5*time.Minute)

	disk := s.DiskPath("host-0000", "sda")
	d := configdrivetest.ProvisionedDisk(t, disk, image.Raw)
	if string(d.UserData) != userData || !strings.Contains(string(d.MetaData), node.UUID) {
		t.Fatalf("config drive: meta-data %s, user-data %q", d.MetaData, d.UserData)
	}
	st := waitHost(t, s, "host-0000", "booted from disk", func(st HostState) bool { return st.Booted && st.BootedFrom == "Hdd" })
	if st.Node != "deployed-0" || st.NodeDisk != "sda" || st.Agent != "" || st.Media.Inserted {
		t.Errorf("state after deploy: %+v", st)
	}

	// Undeploy: Ironic cleans the disk through the agent; the Node goes.
	api.provision(node.UUID, "deleted", "available", nil, 5*time.Minute)
	if st := mustState(t, s, "host-0000"); st.Node != "" {
		t.Errorf("state after undeploy: %+v", st)
	}
	if _, err := configdrive.ReadFile(disk); err == nil {
		t.Errorf("disk %s still holds a config drive after cleaning", disk)
	}
}
