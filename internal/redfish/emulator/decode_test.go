package emulator

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestDecodeReset(t *testing.T) {
	for _, tc := range []struct {
		body, want, wantID string
	}{
		{`{"ResetType":"On"}`, "On", ""},
		{`{"ResetType":"GracefulRestart"}`, "GracefulRestart", ""},
		{`{"ResetType":"Nmi"}`, "", "ActionParameterValueNotInList"},
		{`{"ResetType":"on"}`, "", "ActionParameterValueNotInList"},
		{`{"resettype":"On"}`, "", "ActionParameterUnknown"},
		{`{"ResetType":"On","Force":true}`, "", "ActionParameterUnknown"},
		{`{"ResetType":"On","ResetType":"ForceOff"}`, "", "ActionParameterUnknown"},
		{`{}`, "", "ActionParameterMissing"},
		{`{"ResetType":1}`, "", "PropertyValueTypeError"},
		{``, "", "MalformedJSON"},
		{`{"ResetType":`, "", "MalformedJSON"},
		{`[]`, "", "PropertyValueTypeError"},
	} {
		got, e := decodeReset([]byte(tc.body))
		if tc.wantID == "" {
			if e != nil || got != tc.want {
				t.Errorf("%s: %q %+v, want %q", tc.body, got, e, tc.want)
			}
			continue
		}
		if e == nil || e.id != tc.wantID || e.status != http.StatusBadRequest {
			t.Errorf("%s: %+v, want 400 %s", tc.body, e, tc.wantID)
		}
	}
}

func TestDecodeBootPatch(t *testing.T) {
	ptr := func(s string) *string { return &s }
	for _, tc := range []struct {
		body   string
		want   bootPatch
		wantID string
	}{
		{`{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}`, bootPatch{Target: ptr("Cd"), Enabled: ptr("Once")}, ""},
		{`{"Boot":{"BootSourceOverrideMode":"Legacy"}}`, bootPatch{Mode: ptr("Legacy")}, ""},
		{`{"Boot":{"BootSourceOverrideTarget":"Pxe","BootSourceOverrideTarget@Redfish.AllowableValues":["Pxe"]},"@odata.etag":"x"}`, bootPatch{Target: ptr("Pxe")}, ""},
		{`{}`, bootPatch{}, ""},
		{`{"Boot":{"BootSourceOverrideTarget":"Usb"}}`, bootPatch{}, "PropertyValueNotInList"},
		{`{"Boot":{"BootSourceOverrideEnabled":"Always"}}`, bootPatch{}, "PropertyValueNotInList"},
		{`{"Boot":{"BootOrder":["a"]}}`, bootPatch{}, "PropertyNotWritable"},
		{`{"AssetTag":"x"}`, bootPatch{}, "PropertyNotWritable"},
		{`{"Boot":"Cd"}`, bootPatch{}, "PropertyValueTypeError"},
		{`{"Boot":{"BootSourceOverrideTarget":3}}`, bootPatch{}, "PropertyValueTypeError"},
		{`{"Boot":null}`, bootPatch{}, "PropertyValueTypeError"},
		{`null`, bootPatch{}, "MalformedJSON"},
		{`{"Boot":{}`, bootPatch{}, "MalformedJSON"},
	} {
		got, e := decodeBootPatch([]byte(tc.body))
		if tc.wantID == "" {
			if e != nil || str(got.Target) != str(tc.want.Target) || str(got.Enabled) != str(tc.want.Enabled) || str(got.Mode) != str(tc.want.Mode) {
				t.Errorf("%s: %+v %+v", tc.body, got, e)
			}
			continue
		}
		if e == nil || e.id != tc.wantID || e.status != http.StatusBadRequest {
			t.Errorf("%s: %+v, want 400 %s", tc.body, e, tc.wantID)
		}
	}
}

func str(p *string) string {
	if p == nil {
		return "<nil>"
	}
	return *p
}

func TestDecodeInsertMedia(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	m, e := decodeInsertMedia([]byte(`{"Image":"https://h/i.iso","Inserted":true,"WriteProtected":false,"TransferMethod":"Upload","TransferProtocolType":"HTTPS","UserName":"u","Password":"p","MediaType":"CD",
		"Oem":{"Other":{"X":1},"Airship":{"ImageChecksum":"ff","ImageChecksumType":"md5","ImageFormat":"qcow2","UserData":"` + b64("ud") + `","NetworkData":"` + b64("nd") + `","MetaData":"` + b64("md") + `"}}}`))
	if e != nil {
		t.Fatal(e)
	}
	// The Oem section is accepted and ignored, whatever it holds.
	if want := (Media{Inserted: true, Image: "https://h/i.iso", TransferMethod: "Upload"}); m != want {
		t.Errorf("decoded %+v, want %+v", m, want)
	}
	m, e = decodeInsertMedia([]byte(`{"Image":"http://h/i.iso"}`))
	if e != nil || !m.Inserted || !m.WriteProtected || m.TransferMethod != "Stream" {
		t.Errorf("defaults: %+v %+v", m, e)
	}
	for _, tc := range []struct{ body, wantID string }{
		{`{}`, "ActionParameterMissing"},
		{`{"Image":""}`, "ActionParameterMissing"},
		{`{"Image":"ftp://h/i.iso"}`, "ActionParameterValueFormatError"},
		{`{"Image":"not a url"}`, "ActionParameterValueFormatError"},
		{`{"Image":"http://h/i","TransferMethod":"Push"}`, "ActionParameterValueNotInList"},
		{`{"Image":"http://h/i","MediaType":"Floppy"}`, "ActionParameterValueNotInList"},
		{`{"Image":"http://h/i","Inserted":"yes"}`, "PropertyValueTypeError"},
		{`{"Image":"http://h/i","Extra":1}`, "ActionParameterUnknown"},
		{`{"Image":"http://h/i","Oem":[]}`, "PropertyValueTypeError"},
	} {
		_, e := decodeInsertMedia([]byte(tc.body))
		if e == nil || e.id != tc.wantID || e.status != http.StatusBadRequest {
			t.Errorf("%.80s: %+v, want 400 %s", tc.body, e, tc.wantID)
		}
	}
}

// FuzzDecodeRequest sends arbitrary bodies to every endpoint that decodes
// one (Reset, PATCH Boot, InsertMedia, EjectMedia, session creation): the
// server must not fail (5xx) nor panic, and a body that is not JSON is
// answered 400.
func FuzzDecodeRequest(f *testing.F) {
	seeds := []string{
		`{"ResetType":"On"}`,
		`{"ResetType":"ForceOff"}`,
		`{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}`,
		`{"Image":"http://h/i.iso","Inserted":true,"Oem":{"Airship":{"UserData":"aGk=","MetaData":"bG9jYWwtaG9zdG5hbWU6IGEK"}}}`,
		`{"UserName":"admin","Password":"pw"}`,
		`{}`, ``, `null`, `[]`, `{"Boot":{"BootSourceOverrideTarget":null}}`, "\xff\xfe",
	}
	for i, s := range seeds {
		for kind := range 5 {
			f.Add(uint8(kind+i), []byte(s))
		}
	}
	s, err := New(Config{Username: testUser, Password: testPassword, Hosts: Generate(1, 1)}, Options{})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(s.Close)
	h := s.Handler()
	endpoints := []struct{ method, path string }{
		{"POST", systemsPath + "/host-0000/Actions/ComputerSystem.Reset"},
		{"PATCH", systemsPath + "/host-0000"},
		{"POST", managersPath + "/host-0000/VirtualMedia/Cd/Actions/VirtualMedia.InsertMedia"},
		{"POST", managersPath + "/host-0000/VirtualMedia/Cd/Actions/VirtualMedia.EjectMedia"},
		{"POST", sessionsPath},
	}
	f.Fuzz(func(t *testing.T, kind uint8, body []byte) {
		ep := endpoints[int(kind)%len(endpoints)]
		req := httptest.NewRequestWithContext(t.Context(), ep.method, ep.path, strings.NewReader(string(body)))
		req.SetBasicAuth(testUser, testPassword)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		code := rec.Code
		if code >= 500 {
			t.Fatalf("%s %s %q: %d %s", ep.method, ep.path, body, code, rec.Body)
		}
		garbage := !utf8.Valid(body) || !strings.ContainsAny(string(body), "{")
		if garbage && len(strings.TrimSpace(string(body))) > 0 && code != http.StatusBadRequest {
			t.Fatalf("%s %s %q: %d, want 400", ep.method, ep.path, body, code)
		}
		if code >= 400 && strings.Contains(rec.Body.String(), testPassword) {
			t.Fatalf("the error quotes the password: %s", rec.Body)
		}
		// Leave the media drive empty so every insertion decodes fully.
		if ep.path == endpoints[2].path && code < 300 {
			s.mu.Lock()
			s.ejectMedia(s.byName["host-0000"])
			s.mu.Unlock()
		}
	})
}
