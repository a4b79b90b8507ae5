/*
Copyright The Airship-Go Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ArmadaChartSpec is the desired state of one Helm release. Its fields are
// those of Armada's armada/Chart/v2 document (the `data` part), plus
// chart_name, install and upgrade.no_hooks from v1 and target_state from the
// first Armada operator, so documents written for either load unchanged.
type ArmadaChartSpec struct {
	// chart_name is a display name for the chart. Armada v2 dropped it in
	// favour of metadata.name; it is accepted for v1-era documents and is
	// informational only.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	ChartName string `json:"chart_name,omitempty"`

	// release is the Helm release name before the manifest's release_prefix
	// is prepended ("<release_prefix>-<release>"). Helm limits the full name
	// to 53 characters of DNS-1123 subdomain syntax.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=53
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Release string `json:"release"`

	// namespace is the namespace the release is installed into. It may differ
	// from the namespace of this ArmadaChart object.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	Namespace string `json:"namespace"`

	// source says where the chart is read from.
	// +required
	Source ArmadaChartSource `json:"source"`

	// values overrides the chart's default values, as a free-form object
	// (the same document `helm install -f` would read).
	// +optional
	// +kubebuilder:validation:Type=object
	// +kubebuilder:pruning:PreserveUnknownFields
	Values *apiextensionsv1.JSON `json:"values,omitempty"`

	// valuesFrom reads values from Secrets and ConfigMaps in the
	// ArmadaChart's namespace, merged in order, and spec.values on top, as
	// Flux's HelmRelease does. Values that carry keys or passwords belong
	// in a Secret this way rather than in spec.values, which anyone who
	// may read ArmadaCharts can read. A change of a referenced object
	// upgrades the release.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	ValuesFrom []ValuesReference `json:"valuesFrom,omitempty"`

	// dependencies replaces the chart's own subcharts with other charts: each
	// entry is the metadata.name of an ArmadaChart in the same namespace
	// whose source is vendored into this chart before it is rendered (Armada
	// uses it to inject helm-toolkit). It does not order releases; ordering
	// is the job of ArmadaChartGroup.sequenced and ArmadaManifest.chart_groups.
	// An entry is a name only: a chart cannot vendor one from another
	// namespace.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=253
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Dependencies []string `json:"dependencies,omitempty"`

	// wait says what must become ready, and how long to wait, before the
	// release counts as deployed.
	// +optional
	Wait *ArmadaChartWait `json:"wait,omitempty"`

	// test configures `helm test` after each install or upgrade.
	// +optional
	Test *ArmadaChartTest `json:"test,omitempty"`

	// protected keeps a release that Helm reports as failed instead of
	// purging and reinstalling it. Its presence turns protection on.
	// +optional
	Protected *ArmadaChartProtected `json:"protected,omitempty"`

	// install holds options for the first installation of the release. It is
	// a v1-era field that Armada itself ignored; here no_hooks is honoured.
	// +optional
	Install *ArmadaChartInstall `json:"install,omitempty"`

	// upgrade holds options and pre-upgrade actions for upgrades.
	// +optional
	Upgrade *ArmadaChartUpgrade `json:"upgrade,omitempty"`

	// delete holds options for uninstalling the release.
	// +optional
	Delete *ArmadaChartDelete `json:"delete,omitempty"`

	// target_state is the state the controller drives the release to:
	// deployed installs or upgrades it, uninstalled removes it, and
	// uninitialized leaves it alone (for charts that are only dependencies,
	// or that a group or workflow enables later). Defaults to deployed. A
	// group that enables the chart records its own target in the
	// annotation armada.airshipit.org/target-state, which takes precedence
	// and leaves this field as written.
	// +optional
	// +kubebuilder:default=deployed
	TargetState TargetState `json:"target_state,omitempty"`
}

// ValuesReference names a Secret or ConfigMap key holding values.
type ValuesReference struct {
	// kind is Secret or ConfigMap.
	// +required
	// +kubebuilder:validation:Enum=Secret;ConfigMap
	Kind string `json:"kind"`

	// name of the object, in the ArmadaChart's namespace: there is no
	// namespace field, so a chart reads only its own namespace's objects.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	Name string `json:"name"`

	// valuesKey is the data key whose content is a YAML map of values.
	// Defaults to values.yaml.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[-._a-zA-Z0-9]+$`
	ValuesKey string `json:"valuesKey,omitempty"`

	// optional lets the chart deploy without the object (or key) instead of
	// waiting for it.
	// +optional
	Optional bool `json:"optional,omitempty"`
}

// DefaultValuesKey is ValuesReference.valuesKey when it is empty.
const DefaultValuesKey = "values.yaml"

// SourceType names how ArmadaChartSource.location is read.
// +kubebuilder:validation:Enum=local;tar;dir
type SourceType string

const (
	// SourceTypeLocal reads a directory on the controller's filesystem
	// (Armada's `local`): location is the parent directory and subpath, if
	// set, the chart directory below it.
	SourceTypeLocal SourceType = "local"
	// SourceTypeTar reads a gzipped chart archive from an http(s) URL or a
	// path on the controller's filesystem; subpath, if set, selects the chart
	// directory inside the archive.
	SourceTypeTar SourceType = "tar"
	// SourceTypeDir reads a directory on the controller's filesystem exactly
	// as local does (location joined with subpath). The two names are
	// interchangeable; local is Armada's spelling.
	SourceTypeDir SourceType = "dir"
)

// ArmadaChartSource locates a chart.
//
// +kubebuilder:validation:XValidation:rule="self.type == 'tar' || !self.location.contains('://')",message="source.location of type local or dir is a path on the operator's filesystem, not a URL (use type tar for an archive served over HTTP)"
// +kubebuilder:validation:XValidation:rule="!self.location.contains('://') || self.location.startsWith('http://') || self.location.startsWith('https://')",message="source.location: a URL must be http:// or https://"
// +kubebuilder:validation:XValidation:rule="self.location.contains('://') || !self.location.matches('(^|/)[.][.](/|$)')",message="source.location must not climb with '..'"
// +kubebuilder:validation:XValidation:rule="!has(self.subpath) || !self.subpath.matches('(^|/)[.][.](/|$)')",message="source.subpath must not climb with '..'"
type ArmadaChartSource struct {
	// type is how location is read: local or dir (a directory) or tar (a
	// gzipped archive). Armada's git type is not supported.
	// +required
	Type SourceType `json:"type"`

	// location is a filesystem path (local, dir, tar) or an http(s) URL (tar).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=4096
	Location string `json:"location"`

	// subpath is the chart's directory relative to location (or to the root
	// of the archive). Empty or "." means location itself.
	// +optional
	// +kubebuilder:validation:MaxLength=4096
	Subpath string `json:"subpath,omitempty"`

	// reference is the branch, tag or commit of a git source in Armada. The
	// source types accepted here do not use it; it is accepted so documents
	// that carry it (as the first Armada operator's examples do) still load.
	// +optional
	// +kubebuilder:validation:MaxLength=1024
	Reference string `json:"reference,omitempty"`
}

// ArmadaChartWait says what to wait for after an install or upgrade.
type ArmadaChartWait struct {
	// timeout is how long to wait, in integer seconds (Armada's unit, kept
	// for compatibility). 0 or unset means DefaultWaitTimeoutSeconds (900).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Timeout int64 `json:"timeout,omitempty"`

	// labels select the release's resources to wait for; they are added to
	// the labels of every entry in resources.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// resources lists the kinds of resources to wait for. Unset means every
	// supported kind with required: false; an empty list disables waiting (so the field is
	// written even when empty: omitting it would mean "wait on everything").
	// Armada v2 also accepts a map keyed by type here; only the list form is
	// supported.
	// +optional
	// +listType=atomic
	Resources []ArmadaChartWaitResource `json:"resources"`

	// native configures Helm's own --wait, which runs in addition to the
	// waits above.
	// +optional
	Native *ArmadaChartWaitNative `json:"native,omitempty"`
}

// WaitResourceType is a kind of resource a wait can target.
// +kubebuilder:validation:Enum=job;daemonset;statefulset;deployment;pod
type WaitResourceType string

// Wait resource types, in Armada's spelling.
const (
	WaitResourceJob         WaitResourceType = "job"
	WaitResourceDaemonSet   WaitResourceType = "daemonset"
	WaitResourceStatefulSet WaitResourceType = "statefulset"
	WaitResourceDeployment  WaitResourceType = "deployment"
	// WaitResourcePod waits for pods that no controller owns; controller-owned
	// pods are covered by waiting on their controller.
	WaitResourcePod WaitResourceType = "pod"
)

// ArmadaChartWaitResource selects one kind of resource to wait for.
type ArmadaChartWaitResource struct {
	// type is the kind of resource: job, daemonset, statefulset, deployment
	// or pod.
	// +required
	Type WaitResourceType `json:"type"`

	// labels narrow the selection further; wait.labels are added to them.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`

	// min_ready is, for controllers (deployment, daemonset, statefulset), how
	// many of their pods must be ready: an integer count or a percentage
	// string such as "80%". Unset means "100%".
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:Pattern=`^([0-9]+|([0-9]|[1-9][0-9]|100)%)$`
	MinReady *intstr.IntOrString `json:"min_ready,omitempty"`

	// required fails the wait when no resource matches. Unset means true for
	// an explicitly listed resource, as in Armada.
	// +optional
	Required *bool `json:"required,omitempty"`

	// allow_async_updates, for daemonset and statefulset, accepts update
	// strategies that do not finish on their own (OnDelete, or a partitioned
	// RollingUpdate) instead of failing fast. Defaults to false.
	// +optional
	AllowAsyncUpdates bool `json:"allow_async_updates,omitempty"`
}

// ArmadaChartWaitNative configures Helm's built-in wait.
type ArmadaChartWaitNative struct {
	// enabled turns on Helm's --wait. Defaults to false, as in Armada v2:
	// Helm's wait knows nothing of min_ready and would wait for 100%.
	// +optional
	Enabled bool `json:"enabled,omitempty"`
}

// ArmadaChartTest configures Helm tests.
type ArmadaChartTest struct {
	// enabled runs `helm test` after each install or upgrade. Unset means
	// the test_charts value of the chart's group if that is set, else true,
	// as in Armada; set false to skip tests.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// timeout bounds the test run, in integer seconds (Armada's unit). 0 or
	// unset means DefaultTestTimeoutSeconds (300).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Timeout int64 `json:"timeout,omitempty"`

	// options are passed through to Helm's test action.
	// +optional
	Options *ArmadaChartTestOptions `json:"options,omitempty"`
}

// ArmadaChartTestOptions are Helm test options.
type ArmadaChartTestOptions struct {
	// cleanup deletes the test pods once the tests finish. Defaults to false,
	// which keeps failed test pods around for debugging.
	// +optional
	Cleanup bool `json:"cleanup,omitempty"`
}

// ArmadaChartProtected marks a release as protected.
type ArmadaChartProtected struct {
	// continue_processing, when the protected release is found failed, lets
	// the rest of the group and manifest go on; false (the default) halts
	// them.
	// +optional
	ContinueProcessing bool `json:"continue_processing,omitempty"`
}

// ArmadaChartInstall holds install options.
type ArmadaChartInstall struct {
	// no_hooks skips the chart's hooks on install, like `helm install
	// --no-hooks`.
	// +optional
	NoHooks bool `json:"no_hooks,omitempty"`
}

// ArmadaChartUpgrade holds upgrade options and pre-upgrade actions.
type ArmadaChartUpgrade struct {
	// pre lists actions run before each upgrade.
	// +optional
	Pre *ArmadaChartUpgradePre `json:"pre,omitempty"`

	// options are passed through to Helm's upgrade action.
	// +optional
	Options *ArmadaChartUpgradeOptions `json:"options,omitempty"`

	// no_hooks is the Armada v1 spelling of options.no_hooks, accepted so
	// older documents load; hooks are skipped if either is true.
	// +optional
	NoHooks bool `json:"no_hooks,omitempty"`
}

// ArmadaChartUpgradePre holds actions run before an upgrade.
type ArmadaChartUpgradePre struct {
	// delete lists resources to delete before the upgrade, typically
	// completed jobs whose immutable spec the new release changes.
	// +optional
	// +listType=atomic
	Delete []ArmadaChartHookAction `json:"delete,omitempty"`
}

// HookActionType is a kind of resource a pre-upgrade delete can target.
// +kubebuilder:validation:Enum=pod;job;cronjob
type HookActionType string

// Pre-upgrade delete targets, in Armada's spelling.
const (
	HookActionPod     HookActionType = "pod"
	HookActionJob     HookActionType = "job"
	HookActionCronJob HookActionType = "cronjob"
)

// ArmadaChartHookAction selects resources in the release namespace.
type ArmadaChartHookAction struct {
	// type is the kind of resource: pod, job or cronjob.
	// +required
	Type HookActionType `json:"type"`

	// labels select which resources of that kind are acted on.
	// +optional
	Labels map[string]string `json:"labels,omitempty"`
}

// ArmadaChartUpgradeOptions are Helm upgrade options.
type ArmadaChartUpgradeOptions struct {
	// force replaces resources that cannot be patched, like `helm upgrade
	// --force`.
	// +optional
	Force bool `json:"force,omitempty"`

	// no_hooks skips the chart's hooks on upgrade, like `helm upgrade
	// --no-hooks`.
	// +optional
	NoHooks bool `json:"no_hooks,omitempty"`
}

// ArmadaChartDelete holds uninstall options.
type ArmadaChartDelete struct {
	// timeout bounds the uninstall, in integer seconds (Armada's unit). 0 or
	// unset means DefaultDeleteTimeoutSeconds (300).
	// +optional
	// +kubebuilder:validation:Minimum=0
	Timeout int64 `json:"timeout,omitempty"`
}

// ArmadaChartStatus is the observed state of an ArmadaChart.
type ArmadaChartStatus struct {
	// observedGeneration is the metadata.generation this status describes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// conditions are Ready, Reconciling and Stalled, kstatus style.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=16
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// state is the state of the release the controller last observed.
	// +optional
	State State `json:"state,omitempty"`

	// targetState is the target state the controller last acted on: the
	// enabling group's armada.airshipit.org/target-state annotation when
	// set, else spec.target_state.
	// +optional
	TargetState TargetState `json:"targetState,omitempty"`

	// satisfied is true when state equals targetState.
	// +optional
	Satisfied bool `json:"satisfied"`

	// releaseName is the full Helm release name, with the manifest's prefix.
	// +optional
	// +kubebuilder:validation:MaxLength=53
	ReleaseName string `json:"releaseName,omitempty"`

	// helmRevision is the revision number of the current Helm release.
	// +optional
	// +kubebuilder:validation:Minimum=0
	HelmRevision int32 `json:"helmRevision,omitempty"`

	// helmStatus is Helm's own status of the current release (deployed,
	// failed, pending-upgrade, ...).
	// +optional
	// +kubebuilder:validation:MaxLength=64
	HelmStatus string `json:"helmStatus,omitempty"`

	// lastAppliedValuesChecksum is a digest of the values of the last
	// successful install or upgrade ("sha256:<hex>"), used to tell whether an
	// upgrade is needed without reading the release back.
	// +optional
	// +kubebuilder:validation:MaxLength=128
	LastAppliedValuesChecksum string `json:"lastAppliedValuesChecksum,omitempty"`

	// waitCompleted is true once the waits of spec.wait have passed for the
	// current release revision.
	// +optional
	WaitCompleted bool `json:"waitCompleted,omitempty"`

	// tested is true once the Helm tests have passed for the current release
	// revision.
	// +optional
	Tested bool `json:"tested,omitempty"`

	// failures counts consecutive failed reconciliations of the current
	// generation; it resets on success.
	// +optional
	// +kubebuilder:validation:Minimum=0
	Failures int64 `json:"failures,omitempty"`

	// installFailures counts consecutive failed installs of the current
	// generation; it resets on success.
	// +optional
	// +kubebuilder:validation:Minimum=0
	InstallFailures int64 `json:"installFailures,omitempty"`

	// upgradeFailures counts consecutive failed upgrades of the current
	// generation; it resets on success.
	// +optional
	// +kubebuilder:validation:Minimum=0
	UpgradeFailures int64 `json:"upgradeFailures,omitempty"`
}

// ArmadaChart installs one Helm chart as a release and keeps it in its
// target state: install or upgrade, wait, test, and uninstall on delete.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:path=armadacharts,scope=Namespaced,shortName=act,categories=armada
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`,description="Observed state of the release"
// +kubebuilder:printcolumn:name="Target State",type=string,JSONPath=`.status.targetState`,description="Target state the controller last acted on"
// +kubebuilder:printcolumn:name="Satisfied",type=boolean,JSONPath=`.status.satisfied`,description="Whether the observed state is the target state"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ArmadaChart struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the release.
	// +required
	Spec ArmadaChartSpec `json:"spec"`

	// status is the observed state of the release.
	// +optional
	Status ArmadaChartStatus `json:"status,omitempty"`
}

// +kubebuilder:object:root=true

// ArmadaChartList is a list of ArmadaChart.
type ArmadaChartList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ArmadaCharts.
	Items []ArmadaChart `json:"items"`
}

func init() {
	objectTypes = append(objectTypes, &ArmadaChart{}, &ArmadaChartList{})
}
