package capm3

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta1"
	"github.com/airshipit/airship-go/internal/operatorkit"
)

// renderData asks the machine's data template for meta-data and
// network-data through a Metal3DataClaim, and takes the rendered Secrets
// once ready.
func (s *machineScope) renderData() error {
	m := s.m3m
	if m.Spec.DataTemplate == nil || m.Spec.DataTemplate.Name == "" {
		s.conditions().Remove(infrav1.Metal3DataReadyCondition)
		return nil
	}
	if m.Status.RenderedData != nil && m.Status.MetaData != nil && s.host.Spec.Image != nil {
		// Rendered and written: the data is the host's now.
		return nil
	}
	claim := &infrav1.Metal3DataClaim{}
	key := types.NamespacedName{Namespace: m.Namespace, Name: m.Name}
	if err := s.r.Client.Get(s.ctx, key, claim); err != nil {
		if !apierrors.IsNotFound(err) {
			return fmt.Errorf("reading Metal3DataClaim %s: %w", key, err)
		}
		claim = &infrav1.Metal3DataClaim{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name,
			Labels: map[string]string{clusterv1.ClusterNameLabel: m.Labels[clusterv1.ClusterNameLabel]}}}
		claim.Spec.Template = corev1.ObjectReference{Name: m.Spec.DataTemplate.Name, Namespace: m.Namespace}
		if err := controllerutil.SetControllerReference(m, claim, s.r.Client.Scheme()); err != nil {
			return fmt.Errorf("owning Metal3DataClaim %s: %w", key, err)
		}
		if err := s.r.Client.Create(s.ctx, claim); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("creating Metal3DataClaim %s: %w", key, err)
		}
		return operatorkit.WaitOn(infrav1.Metal3DataReadyCondition, infrav1.WaitingForMetal3DataReason, 0, "Metal3DataClaim %s created; waiting for its Metal3Data", key)
	}
	if claim.Status.RenderedData == nil || claim.Status.RenderedData.Name == "" {
		msg := "waiting for Metal3DataTemplate " + m.Spec.DataTemplate.Name + " to render Metal3DataClaim " + key.String()
		if e := claim.Status.ErrorMessage; e != nil && *e != "" {
			msg += ": " + *e
		}
		return operatorkit.WaitOn(infrav1.Metal3DataReadyCondition, infrav1.WaitingForMetal3DataReason, 0, "%s", msg)
	}
	data := &infrav1.Metal3Data{}
	dkey := types.NamespacedName{Namespace: m.Namespace, Name: claim.Status.RenderedData.Name}
	if err := s.r.Client.Get(s.ctx, dkey, data); err != nil {
		if apierrors.IsNotFound(err) {
			return operatorkit.WaitOn(infrav1.Metal3DataReadyCondition, infrav1.WaitingForMetal3DataReason, 0, "Metal3Data %s not found yet", dkey)
		}
		return fmt.Errorf("reading Metal3Data %s: %w", dkey, err)
	}
	if !data.Status.Ready {
		msg := "Metal3Data " + dkey.String() + " is not ready"
		if e := data.Status.ErrorMessage; e != nil && *e != "" {
			msg += ": " + *e
		}
		return operatorkit.WaitOn(infrav1.Metal3DataReadyCondition, infrav1.WaitingForMetal3DataReason, 0, "%s", msg)
	}
	m.Status.RenderedData = &corev1.ObjectReference{APIVersion: infrav1.GroupVersion.String(), Kind: "Metal3Data", Namespace: dkey.Namespace, Name: dkey.Name}
	m.Status.MetaData = sameNamespace(m.Spec.MetaData, m.Namespace)
	m.Status.NetworkData = sameNamespace(m.Spec.NetworkData, m.Namespace)
	if data.Spec.MetaData != nil {
		m.Status.MetaData = sameNamespace(data.Spec.MetaData, m.Namespace)
	}
	if data.Spec.NetworkData != nil {
		m.Status.NetworkData = sameNamespace(data.Spec.NetworkData, m.Namespace)
	}
	s.conditions().Set(infrav1.Metal3DataReadyCondition, metav1.ConditionTrue, infrav1.Metal3DataSecretsReadyReason, "Metal3Data "+dkey.Name)
	return nil
}

// deleteDataClaim deletes the machine's Metal3DataClaim, which releases its
// index and addresses.
func (s *machineScope) deleteDataClaim() error {
	m := s.m3m
	if m.Spec.DataTemplate == nil {
		return nil
	}
	claim := &infrav1.Metal3DataClaim{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: m.Name}}
	if err := s.r.Client.Delete(s.ctx, claim); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("deleting Metal3DataClaim %s/%s: %w", m.Namespace, m.Name, err)
	}
	return nil
}
