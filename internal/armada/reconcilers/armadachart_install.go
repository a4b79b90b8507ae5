package reconcilers

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	release "helm.sh/helm/v4/pkg/release/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
	"github.com/airshipit/airship-go/internal/armada/helm"
)

// install installs the release (actionInstall). A release Helm finds a
// revision of is refused before anything changes (helm.ErrNameInUse):
// then obj's status is left as it was, and the error returned as it is.
func (r *ArmadaChartReconciler) install(ctx context.Context, obj *armadav1.ArmadaChart, opts helm.Options) (*release.Release, error) {
	before := obj.Status.DeepCopy()
	startAction(obj)
	opts.NoHooks = obj.Spec.Install != nil && obj.Spec.Install.NoHooks
	rel, err := r.Helm.Install(ctx, opts)
	if errors.Is(err, helm.ErrNameInUse) {
		obj.Status = *before
		return nil, err
	}
	if err != nil {
		obj.Status.InstallFailures++
	}
	return r.actionDone(ctx, obj, "install", opts, rel, err)
}

// reinstall purges a release that failed without ever deploying, and
// installs it again (actionReinstall): such a release can be neither
// upgraded nor rolled back.
func (r *ArmadaChartReconciler) reinstall(ctx context.Context, obj *armadav1.ArmadaChart, opts helm.Options) (*release.Release, error) {
	if err := r.Helm.Uninstall(opts.Namespace, opts.Name, deleteTimeout(obj)); err != nil {
		return nil, fmt.Errorf("%s: purging failed release: %w", idOf(obj), err)
	}
	r.events().Record(obj, corev1.EventTypeNormal, "Purged", "Uninstall", fmt.Sprintf("release %s/%s never deployed and failed; purged to reinstall", opts.Namespace, opts.Name))
	return r.install(ctx, obj, opts)
}
