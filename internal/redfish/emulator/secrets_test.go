package emulator

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// TestNoSecretInOutput runs every operation, refused logins and faults
// with a log, and greps the log and every response for the passwords and
// the user-data.
func TestNoSecretInOutput(t *testing.T) {
	const (
		hostPassword  = "host-only-Passw0rd"
		imagePassword = "image-server-Passw0rd"
		userData      = "#cloud-config\npassword: user-data-secret\n"
	)
	var log syncBuffer
	hosts := Generate(2, 1)
	hosts[1].Password = hostPassword
	s, base := start(t, Config{Hosts: hosts}, Options{Log: &log})
	var seen strings.Builder
	call := func(method, path, body string, header map[string]string) int {
		code, hdr, resp := do(t, method, base+path, body, header)
		seen.WriteString(resp)
		for k, v := range hdr {
			if k != "X-Auth-Token" {
				seen.WriteString(k + ": " + strings.Join(v, ",") + "\n")
			}
		}
		return code
	}
	auth := basicHeader(testUser, testPassword)
	sys := systemsPath + "/host-0000"
	media := managersPath + "/host-0000/VirtualMedia/Cd"
	insert := `{"Image":"http://u:` + imagePassword + `@images.example/i.iso?sig=abc","Password":"` + imagePassword + `",
		"Oem":{"Airship":{"UserData":"` + base64.StdEncoding.EncodeToString([]byte(userData)) + `","MetaData":"bG9jYWwtaG9zdG5hbWU6IGEK"}}}`

	for _, step := range []struct {
		method, path, body string
		header             map[string]string
		want               int
	}{
		{"POST", sessionsPath, `{"UserName":"admin","Password":"` + testPassword + `x"}`, nil, 401},
		{"POST", sessionsPath, `{"UserName":"admin","Password":9876543210123}`, nil, 400},
		{"POST", sessionsPath, `{"UserName":"admin","Password":"` + testPassword + `"}`, nil, 201},
		{"GET", sys, "", basicHeader(testUser, hostPassword), 401},
		{"GET", systemsPath + "/host-0001", "", auth, 401},
		{"GET", systemsPath + "/host-0001", "", basicHeader(testUser, hostPassword), 200},
		{"POST", media + "/Actions/VirtualMedia.InsertMedia", insert, auth, 204},
		{"GET", media, "", auth, 200},
		{"POST", media + "/Actions/VirtualMedia.InsertMedia", insert, auth, 409},
		{"PATCH", sys, `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once","Password":"` + testPassword + `"}}`, auth, 400},
		{"PATCH", sys, `{"Boot":{"BootSourceOverrideTarget":"Cd","BootSourceOverrideEnabled":"Once"}}`, auth, 204},
		{"POST", sys + "/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`, auth, 204},
		{"POST", sys + "/Actions/ComputerSystem.Reset", `{"ResetType":"` + testPassword + `"}`, auth, 400},
		{"POST", media + "/Actions/VirtualMedia.EjectMedia", `{}`, auth, 204},
		{"POST", sys + "/Actions/ComputerSystem.Reset", `{"ResetType":"ForceOff"}`, auth, 204},
	} {
		if code := call(step.method, step.path, step.body, step.header); code != step.want {
			t.Fatalf("%s %s: %d, want %d", step.method, step.path, code, step.want)
		}
	}
	s.SetFault("host-0000", Fault{WrongCredentials: true, FailResets: true})
	if code := call("GET", sys, "", auth); code != http.StatusUnauthorized {
		t.Errorf("wrong credentials fault: %d", code)
	}
	s.SetFault("host-0000", Fault{FailResets: true})
	if code := call("POST", sys+"/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`, auth); code != http.StatusInternalServerError {
		t.Errorf("failing resets fault: %d", code)
	}

	out := log.String() + seen.String()
	if !strings.Contains(log.String(), "media inserted: http://u:REDACTED@images.example/i.iso?REDACTED") || !strings.Contains(log.String(), "refused") {
		t.Errorf("the log lacks what it should say:\n%s", log.String())
	}
	for _, secret := range []string{testPassword, hostPassword, imagePassword, "user-data-secret", "9876543210123"} {
		if strings.Contains(out, secret) {
			t.Errorf("%q appears in the output:\n%s", secret, out)
		}
	}
}
