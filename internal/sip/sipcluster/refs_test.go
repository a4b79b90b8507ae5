package sipcluster

import (
	"context"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/sip/schedule"
)

// secretReader records the Secrets asked for and answers each with a
// usable one.
type secretReader struct{ got []string }

func (r *secretReader) Get(_ context.Context, key client.ObjectKey, obj client.Object, _ ...client.GetOption) error {
	r.got = append(r.got, key.Namespace+"/"+key.Name)
	obj.(*corev1.Secret).Data = map[string][]byte{
		"networkData": []byte(`{"networks":[{"id":"oam","ip_address":"10.0.0.1"}]}`),
		"username":    []byte("u"), "password": []byte("p"),
	}
	return nil
}

func (r *secretReader) List(context.Context, client.ObjectList, ...client.ListOption) error {
	return nil
}

// TestSecretReferencesStayInTheirNamespace: every Secret SIP reads is in
// the namespace of the object naming it. A host's networkData and BMC
// credentials are the host's namespace's (a networkData of another
// namespace makes the host unusable and is never read); the jump host's
// keys and the Dex connectors' Secrets are the SIPCluster's namespace's.
func TestSecretReferencesStayInTheirNamespace(t *testing.T) {
	lb := sipv1.SIPClusterServices{LoadBalancerControlPlane: []sipv1.LoadBalancerServiceControlPlane{{NodePort: 30000}}}
	jump := sipv1.SIPClusterServices{JumpHost: []sipv1.JumpHostService{{NodePort: 30001, NodeSSHPrivateKeys: "keys"}}}
	auth := sipv1.SIPClusterServices{Auth: []sipv1.AuthService{{Connectors: []sipv1.OIDCConnector{{
		ConfigSecrets: []sipv1.ConnectorConfigSecret{{Field: "bindPW", SecretRef: sipv1.SecretKeyRef{Name: "ldap", Key: "pw"}}},
	}}}}}
	host := func(nd *corev1.SecretReference) *metal3v1alpha1.BareMetalHost {
		return &metal3v1alpha1.BareMetalHost{
			ObjectMeta: metav1.ObjectMeta{Namespace: "hosts", Name: "h1"},
			Spec:       metal3v1alpha1.BareMetalHostSpec{NetworkData: nd, BMC: metal3v1alpha1.BMCDetails{CredentialsName: "h1-bmc"}},
		}
	}
	tests := []struct {
		name     string
		host     *metal3v1alpha1.BareMetalHost
		services sipv1.SIPClusterServices
		want     []string // Secrets read, in order
		unusable string
		err      string
	}{
		{name: "networkData without namespace", host: host(&corev1.SecretReference{Name: "nd"}), services: lb, want: []string{"hosts/nd"}},
		{name: "networkData in the host's namespace", host: host(&corev1.SecretReference{Name: "nd", Namespace: "hosts"}), services: lb, want: []string{"hosts/nd"}},
		{name: "networkData of another namespace", host: host(&corev1.SecretReference{Name: "victim", Namespace: "kube-system"}), services: lb,
			unusable: "spec.networkData names a Secret of another namespace (kube-system)",
			err:      `BareMetalHost hosts/h1: spec.networkData.namespace "kube-system": must be the host's own namespace`},
		{name: "BMC credentials and jump host keys", host: host(&corev1.SecretReference{Name: "nd"}), services: jump,
			want: []string{"hosts/nd", "hosts/h1-bmc", "tenant/keys"}},
		{name: "Dex connector Secret", host: host(nil), services: auth, want: []string{"tenant/ldap"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rd := &secretReader{}
			r := &SIPClusterReconciler{APIReader: rd}
			c := &sipv1.SIPCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant", Name: "c"}, Spec: sipv1.SIPClusterSpec{Services: tc.services}}
			if got := unusable(tc.host); got != tc.unusable {
				t.Errorf("unusable = %q, want %q", got, tc.unusable)
			}
			_, err := r.extract(context.Background(), tc.host, schedule.Pick{Role: sipv1.RoleControlPlane}, c.Spec.Services)
			if err == nil {
				_, err = r.sshKeys(context.Background(), c)
			}
			if err == nil {
				_, err = r.connectorSecrets(context.Background(), c)
			}
			if (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("error %v, want %q", err, tc.err)
			}
			if !slices.Equal(rd.got, tc.want) {
				t.Errorf("read Secrets %v, want %v", rd.got, tc.want)
			}
		})
	}
}

// TestConditionMessageBounded: a message longer than the API server takes
// in a condition (faults of thousands of hosts) is cut, so the status can
// still be written; Stalled carries the same cut message.
func TestConditionMessageBounded(t *testing.T) {
	tests := []struct {
		name    string
		msg     string
		wantLen int
	}{
		{"short", "spec.nodes: no role", len("spec.nodes: no role")},
		{"at the bound", strings.Repeat("x", maxMessage), maxMessage},
		{"100 KB", strings.Repeat("host h: no address; ", 5000), maxMessage},
		{"multi-byte at the cut", "x" + strings.Repeat("é", 3000), maxMessage - 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := &sipv1.SIPCluster{}
			setReady(c, metav1.ConditionFalse, sipv1.ReasonTypeInvalidSpec, tc.msg)
			for _, cond := range c.Status.Conditions {
				if len(cond.Message) != tc.wantLen || !utf8.ValidString(cond.Message) {
					t.Errorf("%s: message of %d bytes (valid UTF-8: %v), want %d", cond.Type, len(cond.Message), utf8.ValidString(cond.Message), tc.wantLen)
				}
			}
			if len(c.Status.Conditions) != 2 {
				t.Errorf("conditions %d, want Ready and Stalled", len(c.Status.Conditions))
			}
		})
	}
}
