package redfish

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/airshipit/airship-go/internal/bmc"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
)

// memoryBMC answers in memory, never on the network: the service root
// links the systems and managers, the system path answers system, every
// other GET answers other, POST and PATCH 204.
type memoryBMC struct {
	system, other []byte
}

const fuzzSystem = "/redfish/v1/Systems/1"

func (m memoryBMC) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	body := m.other
	switch {
	case req.Method != http.MethodGet:
		return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Header: http.Header{}, Request: req}, nil
	case req.URL.Path == "/redfish/v1/" || req.URL.Path == "/redfish/v1":
		body = []byte(`{"@odata.id": "/redfish/v1/", "Systems": {"@odata.id": "/redfish/v1/Systems"}, "Managers": {"@odata.id": "/redfish/v1/Managers"}}`)
	case req.URL.Path == fuzzSystem:
		body = m.system
	}
	return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(bytes.NewReader(body)),
		Header: http.Header{"Content-Type": {"application/json"}}, ContentLength: -1, Request: req}, nil
}

// FuzzRedfishAnswers: whatever a BMC answers for a system and the
// resources it links (processors, memory, NICs, storage, managers, virtual
// media), register, power state, inspection and media reading neither
// panic nor fail with anything but this package's *Error, and no error
// quotes the answers (the marker in them).
func FuzzRedfishAnswers(f *testing.F) {
	const marker = "Zq9xW"
	system := `{"@odata.id": "` + fuzzSystem + `", "Id": "1", "PowerState": "On", "UUID": "` + marker + `",
  "Actions": {"#ComputerSystem.Reset": {"target": "` + fuzzSystem + `/Actions/ComputerSystem.Reset", "ResetType@Redfish.AllowableValues": ["On", "ForceOff"]}},
  "ProcessorSummary": {"Count": 2, "Model": "` + marker + `"},
  "MemorySummary": {"TotalSystemMemoryGiB": 8},
  "Processors": {"@odata.id": "` + fuzzSystem + `/Processors"},
  "EthernetInterfaces": {"@odata.id": "` + fuzzSystem + `/EthernetInterfaces"},
  "Storage": {"@odata.id": "` + fuzzSystem + `/Storage"},
  "Links": {"ManagedBy": [{"@odata.id": "/redfish/v1/Managers/bmc"}]}}`
	for _, s := range [][2]string{
		{system, `{"Members": [{"@odata.id": "/x/1"}], "Members@odata.count": 1}`},
		{system, `{"@odata.id": "/x/1", "Id": "1", "MACAddress": "` + marker + `", "CapacityBytes": -1, "ProcessorArchitecture": "x86", "InstructionSet": "x86-64", "MediaTypes": ["CD"], "Inserted": true, "Image": "` + marker + `"}`},
		{system, `{"Members": [{"@odata.id": "` + fuzzSystem + `"}]}`},
		{`{"PowerState": 3}`, `{}`},
		{`[]`, `null`},
		{system, `{"Members": [{"@odata.id": "/x/1"}], "Members@odata.nextLink": "/x/next"}`},
		{`{"Processors": {"@odata.id": "` + fuzzSystem + `"}}`, `{"Members": [{"@odata.id": "` + fuzzSystem + `"}]}`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]))
	}
	f.Fuzz(func(t *testing.T, system, other []byte) {
		fac := New(Options{}).(*factory)
		fac.verified = &http.Client{Transport: requestBudget{errorBodies{httplimit.LimitResponses(memoryBMC{system, other}, 1<<20)}}}
		target := provisioner.Target{
			Access:      bmc.Access{Driver: bmc.RedfishVirtualMedia, Endpoint: "http://bmc.fuzz.invalid", SystemPath: fuzzSystem},
			Credentials: provisioner.Credentials{Username: "admin", Password: "pw"},
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p, err := fac.Open(ctx, target)
		check := func(op string, err error) {
			if err == nil {
				return
			}
			if ctx.Err() != nil {
				t.Fatalf("%s: still going after 5 s: %v", op, err)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("%s: %T %v is not an *Error", op, err, err)
			}
			if strings.Contains(err.Error(), marker) {
				t.Fatalf("%s: the error quotes the answer: %v", op, err)
			}
		}
		check("open", err)
		if err != nil {
			return
		}
		check("register", p.Register(ctx))
		_, err = p.PowerState(ctx)
		check("power state", err)
		_, err = p.Inspect(ctx)
		check("inspect", err)
		_, err = p.Media(ctx)
		check("media", err)
	})
}
