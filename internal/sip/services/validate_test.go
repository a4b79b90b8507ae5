package services

import (
	"errors"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/utils/ptr"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

// TestValidate breaks one field of a valid spec per row and expects exactly
// one error, naming that field.
func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(s *sipv1.SIPClusterServices)
		want   string // the field path, and more of the message
	}{
		{"valid", func(*sipv1.SIPClusterServices) {}, ""},
		{"no services", func(s *sipv1.SIPClusterServices) { *s = sipv1.SIPClusterServices{} }, ""},
		{"control-plane node port below the range", func(s *sipv1.SIPClusterServices) { s.LoadBalancerControlPlane[0].NodePort = 6443 },
			"spec.services.loadBalancerControlPlane[0].nodePort: Invalid value: 6443: must be a node port, in 30000-32767"},
		{"control-plane node port not a port", func(s *sipv1.SIPClusterServices) { s.LoadBalancerControlPlane[0].NodePort = 70000 },
			"spec.services.loadBalancerControlPlane[0].nodePort: Invalid value: 70000"},
		{"control-plane node port missing", func(s *sipv1.SIPClusterServices) { s.LoadBalancerControlPlane[0].NodePort = 0 },
			"spec.services.loadBalancerControlPlane[0].nodePort: Invalid value: 0"},
		{"image missing", func(s *sipv1.SIPClusterServices) { s.LoadBalancerControlPlane[0].Image = "" },
			"spec.services.loadBalancerControlPlane[0].image: Required value"},
		{"interface missing", func(s *sipv1.SIPClusterServices) { s.LoadBalancerWorker[0].NodeInterface = "" },
			"spec.services.loadBalancerWorker[0].nodeInterfaceId: Required value"},
		{"node label invalid", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerControlPlane[0].NodeLabels = map[string]string{"role": "bad value"}
		}, "spec.services.loadBalancerControlPlane[0].nodeLabels"},
		{"tolerations valid", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerControlPlane[0].Tolerations = []corev1.Toleration{
				{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule},
				{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "sip", Effect: corev1.TaintEffectNoExecute, TolerationSeconds: ptr.To[int64](300)},
				{Key: "dedicated", Value: "sip"},
				{Operator: corev1.TolerationOpExists},
			}
		}, ""},
		{"toleration key invalid", func(s *sipv1.SIPClusterServices) {
			s.JumpHost[0].Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists}, {Key: "bad key", Operator: corev1.TolerationOpExists}}
		}, "spec.services.jumpHost[0].tolerations[1].key: Invalid value: \"bad key\""},
		{"toleration operator unsupported", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerWorker[0].Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: "Lt", Value: "5"}}
		}, "spec.services.loadBalancerWorker[0].tolerations[0].operator: Unsupported value: \"Lt\""},
		{"toleration value with Exists", func(s *sipv1.SIPClusterServices) {
			s.Auth[0].Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Value: "sip"}}
		}, "spec.services.auth[0].tolerations[0].value: Invalid value: \"sip\": must be empty when operator is Exists"},
		{"toleration value not a label value", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerControlPlane[0].Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "bad value"}}
		}, "spec.services.loadBalancerControlPlane[0].tolerations[0].value: Invalid value: \"bad value\""},
		{"toleration effect unsupported", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerControlPlane[0].Tolerations = []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: "NoRun"}}
		}, "spec.services.loadBalancerControlPlane[0].tolerations[0].effect: Unsupported value: \"NoRun\""},
		{"toleration seconds without NoExecute", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerControlPlane[0].Tolerations = []corev1.Toleration{
				{Key: "dedicated", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: ptr.To[int64](60)},
			}
		}, "spec.services.loadBalancerControlPlane[0].tolerations[0].tolerationSeconds: Invalid value: 60: may be set only when effect is NoExecute"},
		{"toleration seconds without an effect", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerControlPlane[0].Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](60)}}
		}, "spec.services.loadBalancerControlPlane[0].tolerations[0].tolerationSeconds: Invalid value: 60"},
		{"toleration of an empty key with Equal", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerControlPlane[0].Tolerations = []corev1.Toleration{{Operator: corev1.TolerationOpEqual, Value: "sip"}}
		}, "spec.services.loadBalancerControlPlane[0].tolerations[0].operator: Invalid value: \"Equal\": must be Exists when key is empty"},
		{"toleration of an empty key, operator defaulted", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerControlPlane[0].Tolerations = []corev1.Toleration{{Effect: corev1.TaintEffectNoSchedule}}
		}, "spec.services.loadBalancerControlPlane[0].tolerations[0].operator: Invalid value: \"\": must be Exists when key is empty"},
		{"cluster IP not an IP", func(s *sipv1.SIPClusterServices) { s.LoadBalancerWorker[0].ClusterIP = ptr.To("None") },
			"spec.services.loadBalancerWorker[0].clusterIP: Invalid value: \"None\""},
		{"range start after end", func(s *sipv1.SIPClusterServices) {
			s.LoadBalancerWorker[0].NodePortRange = sipv1.PortRange{Start: 30010, End: 30009}
		},
			"spec.services.loadBalancerWorker[0].nodePortRange: Invalid value: \"30010-30009\": start must not be after end"},
		{"range end out of range", func(s *sipv1.SIPClusterServices) { s.LoadBalancerWorker[0].NodePortRange.End = 40000 },
			"spec.services.loadBalancerWorker[0].nodePortRange.end: Invalid value: 40000"},
		{"range start out of range", func(s *sipv1.SIPClusterServices) { s.LoadBalancerWorker[0].NodePortRange.Start = 80 },
			"spec.services.loadBalancerWorker[0].nodePortRange.start: Invalid value: 80"},
		{"range holds another service's node port", func(s *sipv1.SIPClusterServices) { s.LoadBalancerWorker[0].NodePortRange.End = 30005 },
			"spec.services.auth[0].nodePort: Invalid value: 30005: is also the node port of spec.services.loadBalancerWorker[0].nodePortRange"},
		{"two services on one node port", func(s *sipv1.SIPClusterServices) { s.JumpHost[0].NodePort = 30001 },
			"spec.services.jumpHost[0].nodePort: Invalid value: 30001: is also the node port of spec.services.loadBalancerControlPlane[0].nodePort"},
		{"jump host node port", func(s *sipv1.SIPClusterServices) { s.JumpHost[0].NodePort = 22 },
			"spec.services.jumpHost[0].nodePort: Invalid value: 22"},
		{"node SSH keys missing", func(s *sipv1.SIPClusterServices) { s.JumpHost[0].NodeSSHPrivateKeys = "" },
			"spec.services.jumpHost[0].nodeSSHPrivateKeys: Required value"},
		{"node SSH keys not a Secret name", func(s *sipv1.SIPClusterServices) { s.JumpHost[0].NodeSSHPrivateKeys = "Keys!" },
			"spec.services.jumpHost[0].nodeSSHPrivateKeys: Invalid value: \"Keys!\""},
		{"authorized key not a key", func(s *sipv1.SIPClusterServices) { s.JumpHost[0].SSHAuthorizedKeys[1] = "ssh-ed25519 garbage" },
			"spec.services.jumpHost[0].sshAuthorizedKeys[1]: Invalid value"},
		{"auth node port", func(s *sipv1.SIPClusterServices) { s.Auth[0].NodePort = 5556 },
			"spec.services.auth[0].nodePort: Invalid value: 5556"},
		{"issuer missing", func(s *sipv1.SIPClusterServices) { s.Auth[0].Issuer = "" },
			"spec.services.auth[0].issuer: Required value"},
		{"issuer http", func(s *sipv1.SIPClusterServices) { s.Auth[0].Issuer = "http://dex.example:30005/dex" },
			"spec.services.auth[0].issuer: Invalid value: \"http://dex.example:30005/dex\": must be an https URL"},
		{"issuer http on loopback", func(s *sipv1.SIPClusterServices) { s.Auth[0].Issuer = "http://127.0.0.1:5556/dex" }, ""},
		{"issuer relative", func(s *sipv1.SIPClusterServices) { s.Auth[0].Issuer = "/dex" },
			"spec.services.auth[0].issuer: Invalid value: \"/dex\""},
		{"issuer with a query", func(s *sipv1.SIPClusterServices) { s.Auth[0].Issuer = "https://dex.example/?a=b" },
			"spec.services.auth[0].issuer: Invalid value: \"https://dex.example/?a=b\": must have no user information, query nor fragment"},
		{"no static client", func(s *sipv1.SIPClusterServices) { s.Auth[0].StaticClients = nil },
			"spec.services.auth[0].staticClients: Required value"},
		{"client id missing", func(s *sipv1.SIPClusterServices) { s.Auth[0].StaticClients[1].ID = "" },
			"spec.services.auth[0].staticClients[1].id: Required value"},
		{"client ids not unique", func(s *sipv1.SIPClusterServices) { s.Auth[0].StaticClients[1].ID = "kubernetes" },
			"spec.services.auth[0].staticClients[1].id: Duplicate value: \"kubernetes\""},
		{"redirect URI relative", func(s *sipv1.SIPClusterServices) { s.Auth[0].StaticClients[0].RedirectURIs = []string{"/callback"} },
			"spec.services.auth[0].staticClients[0].redirectURIs[0]: Invalid value: \"/callback\""},
		{"secret name missing", func(s *sipv1.SIPClusterServices) { s.Auth[0].StaticClients[0].SecretRef.Name = "" },
			"spec.services.auth[0].staticClients[0].secretRef.name: Required value"},
		{"secret key missing", func(s *sipv1.SIPClusterServices) { s.Auth[0].StaticClients[1].SecretRef.Key = "" },
			"spec.services.auth[0].staticClients[1].secretRef.key: Required value"},
		{"secret key invalid", func(s *sipv1.SIPClusterServices) { s.Auth[0].StaticClients[1].SecretRef.Key = "a/b" },
			"spec.services.auth[0].staticClients[1].secretRef.key: Invalid value: \"a/b\""},
		{"no connector", func(s *sipv1.SIPClusterServices) { s.Auth[0].Connectors = nil },
			"spec.services.auth[0].connectors: Required value"},
		{"connector type missing", func(s *sipv1.SIPClusterServices) { s.Auth[0].Connectors[0].Type = "" },
			"spec.services.auth[0].connectors[0].type: Required value"},
		{"connector id missing", func(s *sipv1.SIPClusterServices) { s.Auth[0].Connectors[0].ID = "" },
			"spec.services.auth[0].connectors[0].id: Required value"},
		{"connector name missing", func(s *sipv1.SIPClusterServices) { s.Auth[0].Connectors[0].Name = "" },
			"spec.services.auth[0].connectors[0].name: Required value"},
		{"connector ids not unique", func(s *sipv1.SIPClusterServices) {
			s.Auth[0].Connectors = append(s.Auth[0].Connectors, s.Auth[0].Connectors[0])
		}, "spec.services.auth[0].connectors[1].id: Duplicate value: \"corp\""},
		{"connector config not an object", func(s *sipv1.SIPClusterServices) {
			s.Auth[0].Connectors[0].Config = &runtime.RawExtension{Raw: []byte(`["a"]`)}
		}, "spec.services.auth[0].connectors[0].config: Invalid value: must be an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := loadInputs(t, "full").Cluster.Spec
			tt.change(&spec.Services)
			err := Validate(spec)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate accepted it; want %q", tt.want)
			}
			var agg utilerrors.Aggregate
			if !errors.As(err, &agg) || len(agg.Errors()) != 1 {
				t.Errorf("want one error, got %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
		})
	}
}

// TestValidateReportsEveryFault: faults in several services are all
// reported, each by its path.
func TestValidateReportsEveryFault(t *testing.T) {
	spec := loadInputs(t, "full").Cluster.Spec
	s := &spec.Services
	s.LoadBalancerControlPlane[0].NodePort = 1
	s.JumpHost[0].Image = ""
	s.Auth[0].Issuer = "ftp://x"
	err := Validate(spec)
	if err == nil {
		t.Fatal("Validate accepted it")
	}
	for _, want := range []string{
		"spec.services.loadBalancerControlPlane[0].nodePort",
		"spec.services.jumpHost[0].image",
		"spec.services.auth[0].issuer",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
