package sipcluster

import (
	"context"
	"fmt"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/sip/netdata"
	"github.com/airshipit/airship-go/internal/sip/schedule"
	"github.com/airshipit/airship-go/internal/sip/services"
)

// extract reads a picked host's addresses and BMC credentials.
func (r *SIPClusterReconciler) extract(ctx context.Context, b *metal3v1alpha1.BareMetalHost, pk schedule.Pick, svc sipv1.SIPClusterServices) (services.Host, error) {
	h := services.Host{Name: b.Name, Role: pk.Role, Standby: pk.Standby, BMCAddress: b.Spec.BMC.Address}
	id := fmt.Sprintf("BareMetalHost %s/%s", b.Namespace, b.Name)
	if needsAddresses(svc) {
		ref := b.Spec.NetworkData
		if ref == nil || ref.Name == "" {
			return h, fmt.Errorf("%s: spec.networkData is not set: SIP reads the host's addresses from it", id)
		}
		if foreignNetworkData(b) {
			return h, fmt.Errorf("%s: spec.networkData.namespace %q: must be the host's own namespace", id, ref.Namespace)
		}
		ns := b.Namespace
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: ns, Name: ref.Name}, sec); err != nil {
			if apierrors.IsNotFound(err) {
				return h, fmt.Errorf("%s: spec.networkData: Secret %s/%s not found", id, ns, ref.Name)
			}
			return h, fmt.Errorf("%s: spec.networkData: reading Secret %s/%s: %w", id, ns, ref.Name, err)
		}
		ips, err := netdata.Parse(sec.Data[netdata.SecretKey])
		if err != nil {
			return h, fmt.Errorf("%s: spec.networkData: Secret %s/%s key %s: %w", id, ns, ref.Name, netdata.SecretKey, err)
		}
		h.IPs = ips
	}
	if len(svc.JumpHost) > 0 && b.Spec.BMC.CredentialsName != "" {
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: b.Namespace, Name: b.Spec.BMC.CredentialsName}, sec); err != nil {
			return h, fmt.Errorf("%s: spec.bmc.credentialsName: Secret %s/%s: %w", id, b.Namespace, b.Spec.BMC.CredentialsName, err)
		}
		h.BMCUsername, h.BMCPassword = string(sec.Data["username"]), string(sec.Data["password"])
	}
	return h, nil
}

// needsAddresses reports whether any service uses the hosts' addresses.
func needsAddresses(s sipv1.SIPClusterServices) bool {
	return len(s.LoadBalancerControlPlane)+len(s.LoadBalancerWorker)+len(s.JumpHost) > 0
}

// sshKeys reads the Secrets the jump hosts' nodeSSHPrivateKeys name.
func (r *SIPClusterReconciler) sshKeys(ctx context.Context, c *sipv1.SIPCluster) ([]map[string][]byte, error) {
	var out []map[string][]byte
	for i, j := range c.Spec.Services.JumpHost {
		sec := &corev1.Secret{}
		if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: j.NodeSSHPrivateKeys}, sec); err != nil {
			if apierrors.IsNotFound(err) {
				// The jump host is built without keys and its status says
				// so; its pod waits for the Secret.
				out = append(out, nil)
				continue
			}
			return nil, fmt.Errorf("spec.services.jumpHost[%d].nodeSSHPrivateKeys: %w", i, err)
		}
		out = append(out, sec.Data)
	}
	return out, nil
}

// connectorSecrets reads the Secrets the Dex connectors' configSecrets
// name, always in the cluster's namespace. A missing one is left out:
// services.Build reports it by its field.
func (r *SIPClusterReconciler) connectorSecrets(ctx context.Context, c *sipv1.SIPCluster) (map[string]*corev1.Secret, error) {
	out := map[string]*corev1.Secret{}
	for i, a := range c.Spec.Services.Auth {
		for j, conn := range a.Connectors {
			for k, cs := range conn.ConfigSecrets {
				name := cs.SecretRef.Name
				if _, done := out[name]; done {
					continue
				}
				sec := &corev1.Secret{}
				if err := r.APIReader.Get(ctx, types.NamespacedName{Namespace: c.Namespace, Name: name}, sec); err != nil {
					if apierrors.IsNotFound(err) {
						continue
					}
					return nil, fmt.Errorf("spec.services.auth[%d].connectors[%d].configSecrets[%d].secretRef: reading Secret %s/%s: %w", i, j, k, c.Namespace, name, err)
				}
				out[name] = sec
			}
		}
	}
	return out, nil
}
