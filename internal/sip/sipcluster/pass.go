package sipcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
	"github.com/airshipit/airship-go/internal/operatorkit"
	"github.com/airshipit/airship-go/internal/sip/schedule"
	"github.com/airshipit/airship-go/internal/sip/services"
)

// pass is gather, schedule, extract, deploy services, label, wait, for a
// valid cluster. It returns the Ready message of a cluster with every host
// labelled and every service available, or the outcome that stopped it:
// a wait (no host fits, a host's data is missing or wrong, a service is
// not yet available) or a failure to retry with backoff.
func (r *SIPClusterReconciler) pass(ctx context.Context, c *sipv1.SIPCluster, req schedule.Request) (string, error) {
	hosts, err := r.gather(ctx)
	if err != nil {
		return "", err
	}
	plan, err := r.schedule(ctx, c, req, hosts)
	if err != nil {
		return "", err
	}
	in, err := r.inputs(ctx, c, plan, hosts)
	if err != nil {
		return "", err
	}
	statuses, oidc, err := r.deploy(ctx, c, in)
	if err != nil {
		return "", err
	}
	if err := r.label(ctx, c, plan, hosts.byKey); err != nil {
		return "", operatorkit.Fail(sipv1.ReasonTypeUnableToApplyLabels, err)
	}
	c.Status.Nodes = nodeStatus(req, plan)
	c.Status.OIDC = oidc
	if err := r.awaitServices(ctx, c, statuses); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d hosts labelled, %d services available", len(plan.Picks), len(statuses)), nil
}

// hostIndex is every BareMetalHost as the cache holds it, and the same
// hosts by namespace/name.
type hostIndex struct {
	items []metal3v1alpha1.BareMetalHost
	byKey map[string]*metal3v1alpha1.BareMetalHost
}

// gather lists every BareMetalHost. The cache's own objects, not copies
// (a copy of 10,000 hosts costs more than scheduling them): nothing
// changes them in place; setLabels works on a copy.
func (r *SIPClusterReconciler) gather(ctx context.Context) (hostIndex, error) {
	var bmhs metal3v1alpha1.BareMetalHostList
	if err := r.Client.List(ctx, &bmhs, client.UnsafeDisableDeepCopy); err != nil {
		return hostIndex{}, fmt.Errorf("listing BareMetalHosts: %w", err)
	}
	idx := hostIndex{items: bmhs.Items, byKey: make(map[string]*metal3v1alpha1.BareMetalHost, len(bmhs.Items))}
	for i := range bmhs.Items {
		b := &bmhs.Items[i]
		idx.byKey[b.Namespace+"/"+b.Name] = b
	}
	return idx, nil
}

// schedule picks the cluster's hosts. A cluster no plan fits waits, as
// Unschedulable, for a host to change; one that was never scheduled
// first loses the labels an unfinished earlier pass wrote, so that it
// holds no host while it waits.
func (r *SIPClusterReconciler) schedule(ctx context.Context, c *sipv1.SIPCluster, req schedule.Request, hosts hostIndex) (schedule.Plan, error) {
	candidates := make([]schedule.Host, len(hosts.items))
	for i := range hosts.items {
		b := &hosts.items[i]
		candidates[i] = schedule.Host{Namespace: b.Namespace, Name: b.Name, Labels: b.Labels, Unusable: unusable(b)}
	}
	plan, err := schedule.Schedule(req, candidates)
	var ue *schedule.UnschedulableError
	if err == nil || !errors.As(err, &ue) {
		return plan, err
	}
	msg := err.Error()
	if len(c.Status.Nodes) == 0 {
		if rerr := r.release(ctx, c, hosts.items); rerr != nil {
			msg += "; releasing its hosts: " + rerr.Error()
		}
	}
	log.FromContext(ctx).Info("unschedulable", "reason", msg)
	return plan, operatorkit.Wait(sipv1.ReasonTypeUnschedulable, 0, "%s", msg)
}

// unusable says why a host cannot be given to a cluster.
func unusable(b *metal3v1alpha1.BareMetalHost) string {
	st := b.Status
	switch {
	case !b.DeletionTimestamp.IsZero():
		return "being deleted"
	case hasAnnotation(b, metal3v1alpha1.DetachedAnnotation) || st.OperationalStatus == metal3v1alpha1.OperationalStatusDetached:
		return "detached"
	case st.ErrorType != "":
		return "in error (" + string(st.ErrorType) + ")"
	case st.OperationalStatus == metal3v1alpha1.OperationalStatusError:
		return "in error"
	case foreignNetworkData(b):
		// Secrets a host names are its own namespace's: SIP never reads
		// another namespace's Secret on a host's word.
		return "spec.networkData names a Secret of another namespace (" + b.Spec.NetworkData.Namespace + ")"
	}
	switch st.Provisioning.State {
	case metal3v1alpha1.StateDeprovisioning, metal3v1alpha1.StateDeleting, metal3v1alpha1.StatePoweringOffBeforeDelete:
		return "being deprovisioned"
	case metal3v1alpha1.StateProvisioned, metal3v1alpha1.StateExternallyProvisioned:
		if b.Spec.Online && !st.PoweredOn {
			return "powered off"
		}
	}
	return ""
}

// foreignNetworkData: the host's networkData names a namespace other
// than its own.
func foreignNetworkData(b *metal3v1alpha1.BareMetalHost) bool {
	ref := b.Spec.NetworkData
	return ref != nil && ref.Namespace != "" && ref.Namespace != b.Namespace
}

func hasAnnotation(o metav1.Object, k string) bool {
	_, ok := o.GetAnnotations()[k]
	return ok
}

// inputs reads what the services are built from: each picked host's
// addresses and BMC credentials, the jump hosts' keys and the Dex
// connectors' Secrets. A Secret or host datum that is missing or wrong is
// waited for, as InfraServiceFailure naming it, rather than retried with
// backoff: Secrets are not watched, and the resync sees the fix.
func (r *SIPClusterReconciler) inputs(ctx context.Context, c *sipv1.SIPCluster, plan schedule.Plan, hosts hostIndex) (services.Inputs, error) {
	in := services.Inputs{Cluster: c}
	for _, pk := range plan.Picks {
		h, err := r.extract(ctx, hosts.byKey[pk.Host.Key()], pk, c.Spec.Services)
		if err != nil {
			return in, waitForInput(err)
		}
		in.Hosts = append(in.Hosts, h)
	}
	slices.SortFunc(in.Hosts, func(a, b services.Host) int { return strings.Compare(a.Name, b.Name) })
	var err error
	if in.SSHKeys, err = r.sshKeys(ctx, c); err != nil {
		return in, waitForInput(err)
	}
	if in.ConnectorSecrets, err = r.connectorSecrets(ctx, c); err != nil {
		return in, waitForInput(err)
	}
	return in, nil
}

// waitForInput is the outcome of a pass whose inputs cannot be used (see
// inputs).
func waitForInput(err error) error {
	return operatorkit.Wait(sipv1.ReasonTypeInfraServiceFailure, 0, "%s", err)
}

// deploy builds the services' objects, applies them and prunes the
// cluster's objects no longer wanted. A build error (a host without an
// address on a service's network, a connector Secret without its key) is
// waited for as inputs' errors are; an apply or prune error is retried
// with backoff.
func (r *SIPClusterReconciler) deploy(ctx context.Context, c *sipv1.SIPCluster, in services.Inputs) ([]sipv1.ServiceStatus, *sipv1.OIDCStatus, error) {
	objs, statuses, oidc, err := services.Build(in)
	if err != nil {
		return nil, nil, waitForInput(err)
	}
	if err := r.applyServices(ctx, c, objs); err != nil {
		return nil, nil, operatorkit.Fail(sipv1.ReasonTypeInfraServiceFailure, err)
	}
	return statuses, oidc, nil
}

// awaitServices records each service's readiness in the status and waits,
// as Progressing, until every one is available; Deployment events wake
// the cluster too.
func (r *SIPClusterReconciler) awaitServices(ctx context.Context, c *sipv1.SIPCluster, statuses []sipv1.ServiceStatus) error {
	ready, waiting := r.servicesReady(ctx, c, statuses)
	c.Status.Services = statuses
	c.Status.ServicesSummary = fmt.Sprintf("%d/%d", ready, len(statuses))
	if len(waiting) > 0 {
		return operatorkit.Wait(sipv1.ReasonTypeProgressing, servicesPoll, "waiting for services to be available: %s", strings.Join(waiting, ", "))
	}
	return nil
}

// nodeStatus summarises the plan per role.
func nodeStatus(req schedule.Request, plan schedule.Plan) map[sipv1.BMHRole]sipv1.RoleStatus {
	out := map[sipv1.BMHRole]sipv1.RoleStatus{}
	for _, role := range req.Roles {
		a, s := plan.Role(role.Role)
		rs := sipv1.RoleStatus{Summary: fmt.Sprintf("%d/%d active, %d/%d standby", len(a), role.Active, len(s), role.Standby)}
		for _, h := range a {
			rs.Active = append(rs.Active, h.Name)
		}
		for _, h := range s {
			rs.Standby = append(rs.Standby, h.Name)
		}
		out[role.Role] = rs
	}
	return out
}
