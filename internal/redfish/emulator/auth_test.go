package emulator

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stmcginnis/gofish"
	"github.com/stmcginnis/gofish/schemas"
)

func TestAuthentication(t *testing.T) {
	hosts := Generate(3, 1)
	hosts[2].Username, hosts[2].Password = "other", "other-Passw0rd"
	_, base := start(t, Config{Hosts: hosts}, Options{})
	good := basicHeader(testUser, testPassword)
	for _, tc := range []struct {
		name, method, path, body string
		header                   map[string]string
		want                     int
	}{
		{"service root is public", "GET", "/redfish/v1/", "", nil, 200},
		{"service root without slash", "GET", "/redfish/v1", "", nil, 200},
		{"versions", "GET", "/redfish", "", nil, 200},
		{"systems need auth", "GET", "/redfish/v1/Systems", "", nil, 401},
		{"a system needs auth", "GET", "/redfish/v1/Systems/host-0000", "", nil, 401},
		{"reset needs auth", "POST", "/redfish/v1/Systems/host-0000/Actions/ComputerSystem.Reset", `{"ResetType":"On"}`, nil, 401},
		{"session service needs auth", "GET", "/redfish/v1/SessionService", "", nil, 401},
		{"unknown paths need auth", "GET", "/redfish/v1/Chassis", "", nil, 401},
		{"wrong password", "GET", "/redfish/v1/Systems", "", basicHeader(testUser, "wrong"), 401},
		{"wrong user", "GET", "/redfish/v1/Systems", "", basicHeader("root", testPassword), 401},
		{"unknown token", "GET", "/redfish/v1/Systems", "", map[string]string{"X-Auth-Token": "deadbeef"}, 401},
		{"basic auth", "GET", "/redfish/v1/Systems/host-0000", "", good, 200},
		{"trailing slash", "GET", "/redfish/v1/Systems/host-0000/", "", good, 200},
		{"unknown system", "GET", "/redfish/v1/Systems/host-9999", "", good, 404},
		{"unknown path", "GET", "/redfish/v1/Chassis", "", good, 404},
		{"another host's credentials", "GET", "/redfish/v1/Systems/host-0002", "", good, 401},
		{"the host's own credentials", "GET", "/redfish/v1/Systems/host-0002", "", basicHeader("other", "other-Passw0rd"), 200},
		{"the host's credentials open only it", "GET", "/redfish/v1/Managers/host-0000", "", basicHeader("other", "other-Passw0rd"), 401},
		{"session with wrong password", "POST", "/redfish/v1/SessionService/Sessions", `{"UserName":"admin","Password":"nope"}`, nil, 401},
		{"session without password", "POST", "/redfish/v1/SessionService/Sessions", `{"UserName":"admin"}`, nil, 400},
		{"session body garbage", "POST", "/redfish/v1/SessionService/Sessions", `{"UserName":`, nil, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, hdr, body := do(t, tc.method, base+tc.path, tc.body, tc.header)
			if code != tc.want {
				t.Fatalf("%s %s: %d %s, want %d", tc.method, tc.path, code, body, tc.want)
			}
			if code >= 400 {
				var e struct {
					Error struct {
						Code string `json:"code"`
						Info []struct {
							MessageID string `json:"MessageId"`
						} `json:"@Message.ExtendedInfo"`
					} `json:"error"`
				}
				if err := json.Unmarshal([]byte(body), &e); err != nil || e.Error.Code == "" || len(e.Error.Info) != 1 {
					t.Errorf("not a Redfish error: %s", body)
				}
			}
			if code == 401 && hdr.Get("WWW-Authenticate") == "" {
				t.Error("401 without WWW-Authenticate")
			}
		})
	}

	t.Run("collections list the hosts the credentials open", func(t *testing.T) {
		for _, tc := range []struct {
			user, password string
			want           []string
		}{
			{testUser, testPassword, []string{"host-0000", "host-0001"}},
			{"other", "other-Passw0rd", []string{"host-0002"}},
		} {
			c := connect(t, base, tc.user, tc.password, true)
			systems, err := c.Service.Systems()
			if err != nil {
				t.Fatal(err)
			}
			managers, err := c.Service.Managers()
			if err != nil {
				t.Fatal(err)
			}
			if len(systems) != len(tc.want) || len(managers) != len(tc.want) {
				t.Fatalf("%s: %d systems, %d managers, want %v", tc.user, len(systems), len(managers), tc.want)
			}
			for i, sys := range systems {
				if sys.ID != tc.want[i] || managers[i].ID != tc.want[i] {
					t.Errorf("%s: system %s manager %s, want %s", tc.user, sys.ID, managers[i].ID, tc.want[i])
				}
			}
		}
	})

	t.Run("sessions", func(t *testing.T) {
		code, hdr, body := do(t, "POST", base+sessionsPath, `{"UserName":"admin","Password":"`+testPassword+`"}`, nil)
		if code != http.StatusCreated || hdr.Get("X-Auth-Token") == "" || !strings.HasPrefix(hdr.Get("Location"), sessionsPath+"/") {
			t.Fatalf("create: %d %v %s", code, hdr, body)
		}
		if strings.Contains(body, testPassword) {
			t.Fatal("the session resource holds the password")
		}
		token := map[string]string{"X-Auth-Token": hdr.Get("X-Auth-Token")}
		location := hdr.Get("Location")
		if code, _, body := do(t, "GET", base+"/redfish/v1/Systems/host-0001", "", token); code != 200 {
			t.Fatalf("with the token: %d %s", code, body)
		}
		code, _, body = do(t, "GET", base+sessionsPath, "", token)
		if code != 200 || !strings.Contains(body, location) {
			t.Errorf("session collection: %d %s lacks %s", code, body, location)
		}
		if code, _, _ := do(t, "GET", base+location, "", basicHeader("other", "other-Passw0rd")); code != 404 {
			t.Errorf("another user reads the session: %d, want 404", code)
		}
		if code, _, body := do(t, "DELETE", base+location, "", token); code != http.StatusNoContent {
			t.Fatalf("delete: %d %s", code, body)
		}
		if code, _, _ := do(t, "GET", base+"/redfish/v1/Systems/host-0001", "", token); code != 401 {
			t.Errorf("a deleted session's token: %d, want 401", code)
		}
	})

	t.Run("gofish logout ends the session", func(t *testing.T) {
		c, err := gofish.Connect(gofish.ClientConfig{Endpoint: base, Username: testUser, Password: testPassword})
		if err != nil {
			t.Fatal(err)
		}
		sess, err := c.GetSession()
		if err != nil || sess.Token == "" || !strings.HasPrefix(sess.ID, sessionsPath+"/") {
			t.Fatalf("session %+v: %v", sess, err)
		}
		c.Logout()
		if code, _, _ := do(t, "GET", base+systemsPath, "", map[string]string{"X-Auth-Token": sess.Token}); code != 401 {
			t.Errorf("token after Logout: %d, want 401", code)
		}
	})

	t.Run("gofish with a wrong password", func(t *testing.T) {
		for _, basic := range []bool{false, true} {
			c, err := gofish.Connect(gofish.ClientConfig{Endpoint: base, Username: testUser, Password: "wrong", BasicAuth: basic})
			if err == nil {
				_, err = schemas.GetComputerSystem(c, systemsPath+"/host-0000")
			}
			if statusOf(err) != http.StatusUnauthorized {
				t.Errorf("basic %v: %v, want 401", basic, err)
			}
		}
	})
}
