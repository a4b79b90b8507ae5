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

package v1beta1

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/url"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	clusterv1 "sigs.k8s.io/cluster-api/api/core/v1beta2"
	capierrors "sigs.k8s.io/cluster-api/api/deprecated/errors" //nolint:staticcheck // v1beta2's failureReason types
	"sigs.k8s.io/controller-runtime/pkg/conversion"

	infrav1 "github.com/airshipit/airship-go/api/infrastructure/v1beta2"
)

// Conversion to and from the v1beta2 hub. Each kind converts its spec and
// its status as two parts, each by a pair of pure functions (to v1beta2 and
// back). Where a part's conversion loses something, the converted object
// records the source part, as JSON in an annotation, and the conversion
// back uses the record instead of converting, as long as the record still
// converts to exactly what the object holds (nothing the object's version
// can hold has changed since). So a round trip gives back the object it
// started from, in either direction, and an edit made in the other version
// wins over a stale record.

// Annotations holding what one version cannot, of an object converted from
// the other.
const (
	// ConversionDataAnnotation on a v1beta1 object records the v1beta2 parts
	// it was converted from. It is Cluster API's annotation for this (its
	// util/conversion.DataAnnotation); ConvertTo removes it.
	ConversionDataAnnotation = "cluster.x-k8s.io/conversion-data"
	// V1Beta1DataAnnotation on a v1beta2 object records the v1beta1 parts it
	// was converted from, for example a Metal3Data's templateReference;
	// ConvertFrom removes it.
	V1Beta1DataAnnotation = "infrastructure.cluster.x-k8s.io/v1beta1-conversion-data"
)

// direction converts one part from In to Out, and back.
type direction[In, Out any] struct {
	to   func(*In) Out
	back func(*Out) In
}

func (d direction[In, Out]) reverse() direction[Out, In] {
	return direction[Out, In]{to: d.back, back: d.to}
}

// parts is an object seen as its metadata, spec and status.
type parts[Spec, Status any] struct {
	meta   *metav1.ObjectMeta
	spec   *Spec
	status *Status
}

func partsOf[Spec, Status any](meta *metav1.ObjectMeta, spec *Spec, status *Status) parts[Spec, Status] {
	return parts[Spec, Status]{meta: meta, spec: spec, status: status}
}

// record is the annotation's content: the parts of the source version that
// the conversion lost.
type record[Spec, Status any] struct {
	Spec   *Spec   `json:"spec,omitempty"`
	Status *Status `json:"status,omitempty"`
}

// noStatus is the status of the kinds that have none.
type noStatus struct{}

var noStatusConv = direction[noStatus, noStatus]{
	to:   func(*noStatus) noStatus { return noStatus{} },
	back: func(*noStatus) noStatus { return noStatus{} },
}

// convertUp converts a v1beta1 object (from) into a v1beta2 one (to).
func convertUp[SSpec, SStatus, HSpec, HStatus any](from parts[SSpec, SStatus], to parts[HSpec, HStatus],
	spec direction[SSpec, HSpec], status direction[SStatus, HStatus]) error {
	return convert(from, to, spec, status, ConversionDataAnnotation, V1Beta1DataAnnotation)
}

// convertDown converts a v1beta2 object (from) into a v1beta1 one (to).
func convertDown[SSpec, SStatus, HSpec, HStatus any](from parts[HSpec, HStatus], to parts[SSpec, SStatus],
	spec direction[SSpec, HSpec], status direction[SStatus, HStatus]) error {
	return convert(from, to, spec.reverse(), status.reverse(), V1Beta1DataAnnotation, ConversionDataAnnotation)
}

// convert fills to from from: metadata copied without either annotation,
// each part from the record under readKey when it still holds, else
// converted; then what the conversion lost is recorded under writeKey.
// The part functions share maps and slices between input and output, so
// callers pass a copy of their source object.
func convert[FSpec, FStatus, TSpec, TStatus any](from parts[FSpec, FStatus], to parts[TSpec, TStatus],
	spec direction[FSpec, TSpec], status direction[FStatus, TStatus], readKey, writeKey string) error {
	rec := record[TSpec, TStatus]{}
	if data, ok := from.meta.Annotations[readKey]; ok {
		if err := json.Unmarshal([]byte(data), &rec); err != nil {
			return fmt.Errorf("%s/%s: reading annotation %s: %w", from.meta.Namespace, from.meta.Name, readKey, err)
		}
	}
	meta := from.meta.DeepCopy()
	delete(meta.Annotations, ConversionDataAnnotation)
	delete(meta.Annotations, V1Beta1DataAnnotation)
	*to.meta = *meta

	*to.spec = convertPart(from.spec, rec.Spec, spec)
	*to.status = convertPart(from.status, rec.Status, status)

	lost := record[FSpec, FStatus]{Spec: lostPart(from.spec, to.spec, spec), Status: lostPart(from.status, to.status, status)}
	if lost.Spec == nil && lost.Status == nil {
		return nil
	}
	data, err := json.Marshal(lost)
	if err != nil {
		return fmt.Errorf("%s/%s: writing annotation %s: %w", from.meta.Namespace, from.meta.Name, writeKey, err)
	}
	if to.meta.Annotations == nil {
		to.meta.Annotations = map[string]string{}
	}
	to.meta.Annotations[writeKey] = string(data)
	return nil
}

// convertPart converts in, or returns the recorded part when it converts
// back to exactly in.
func convertPart[In, Out any](in *In, recorded *Out, d direction[In, Out]) Out {
	if recorded != nil {
		if back := d.back(recorded); apiequality.Semantic.DeepEqual(&back, in) {
			return *recorded
		}
	}
	return d.to(in)
}

// lostPart returns in when out does not convert back to it, nil when it
// does.
func lostPart[In, Out any](in *In, out *Out, d direction[In, Out]) *In {
	if back := d.back(out); apiequality.Semantic.DeepEqual(&back, in) {
		return nil
	}
	return in
}

func wrongHub(want string, got conversion.Hub) error {
	return fmt.Errorf("converting %s: got a %T, not a v1beta2 %s", want, got, want)
}

// Metal3Cluster.

var (
	clusterSpecConv   = direction[Metal3ClusterSpec, infrav1.Metal3ClusterSpec]{to: upClusterSpec, back: downClusterSpec}
	clusterStatusConv = direction[Metal3ClusterStatus, infrav1.Metal3ClusterStatus]{to: upClusterStatus, back: downClusterStatus}
)

// ConvertTo converts this Metal3Cluster to the v1beta2 hub.
func (src *Metal3Cluster) ConvertTo(dstRaw conversion.Hub) error {
	src = src.DeepCopy()
	dst, ok := dstRaw.(*infrav1.Metal3Cluster)
	if !ok {
		return wrongHub("Metal3Cluster", dstRaw)
	}
	return convertUp(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		clusterSpecConv, clusterStatusConv)
}

// ConvertFrom converts the v1beta2 hub to this Metal3Cluster.
func (dst *Metal3Cluster) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.Metal3Cluster)
	if !ok {
		return wrongHub("Metal3Cluster", srcRaw)
	}
	src = src.DeepCopy()
	return convertDown(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		clusterSpecConv, clusterStatusConv)
}

// upClusterSpec: noCloudProvider becomes cloudProviderEnabled (negated)
// when that is unset, the https URL of apiEndpoint becomes
// controlPlaneEndpoint when that is empty, and the failure domains' map a
// list sorted by name.
func upClusterSpec(in *Metal3ClusterSpec) infrav1.Metal3ClusterSpec {
	out := infrav1.Metal3ClusterSpec{
		ControlPlaneEndpoint: upAPIEndpoint(in.ControlPlaneEndpoint),
		CloudProviderEnabled: in.CloudProviderEnabled,
		FailureDomains:       upFailureDomains(in.FailureDomains),
	}
	if out.CloudProviderEnabled == nil && in.NoCloudProvider != nil {
		out.CloudProviderEnabled = ptr.To(!*in.NoCloudProvider)
	}
	if in.ControlPlaneEndpoint.IsZero() && in.APIEndpoint != "" {
		if ep, err := ParseAPIEndpoint(in.APIEndpoint); err == nil {
			out.ControlPlaneEndpoint = upAPIEndpoint(ep)
		}
	}
	return out
}

func downClusterSpec(in *infrav1.Metal3ClusterSpec) Metal3ClusterSpec {
	return Metal3ClusterSpec{
		ControlPlaneEndpoint: downAPIEndpoint(in.ControlPlaneEndpoint),
		CloudProviderEnabled: in.CloudProviderEnabled,
		FailureDomains:       downFailureDomains(in.FailureDomains),
	}
}

// ParseAPIEndpoint reads the https URL form of a Metal3Cluster's
// spec.apiEndpoint; the port defaults to 6443.
func ParseAPIEndpoint(s string) (APIEndpoint, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return APIEndpoint{}, fmt.Errorf("spec.apiEndpoint %q is not a URL like https://<host>:<port>", s)
	}
	host, port := u.Hostname(), u.Port()
	if port == "" {
		port = "6443"
	}
	p, err := strconv.Atoi(port)
	if err != nil || p < 1 || p > 65535 {
		return APIEndpoint{}, fmt.Errorf("spec.apiEndpoint %q: port %q is not a TCP port", s, port)
	}
	return APIEndpoint{Host: host, Port: p}, nil
}

func upClusterStatus(in *Metal3ClusterStatus) infrav1.Metal3ClusterStatus {
	out := infrav1.Metal3ClusterStatus{
		Conditions:     in.Conditions,
		LastUpdated:    in.LastUpdated,
		Initialization: infrav1.Metal3ClusterInitializationStatus{Provisioned: upProvisioned(in.Ready, in.Initialization)},
	}
	if in.FailureReason != nil || in.FailureMessage != nil {
		out.Deprecated = &infrav1.Metal3ClusterDeprecatedStatus{V1Beta1: &infrav1.Metal3ClusterV1Beta1DeprecatedStatus{
			FailureReason:  (*capierrors.ClusterStatusError)(in.FailureReason),
			FailureMessage: in.FailureMessage,
		}}
	}
	return out
}

// downClusterStatus: ready is provisioned; v1beta1 has no place for the
// status' failure domains nor for Cluster API's v1beta1 conditions.
func downClusterStatus(in *infrav1.Metal3ClusterStatus) Metal3ClusterStatus {
	out := Metal3ClusterStatus{
		Ready:          ptr.Deref(in.Initialization.Provisioned, false),
		Initialization: InitializationStatus{Provisioned: in.Initialization.Provisioned},
		LastUpdated:    in.LastUpdated,
		Conditions:     in.Conditions,
	}
	if d := in.Deprecated; d != nil && d.V1Beta1 != nil {
		out.FailureReason = (*string)(d.V1Beta1.FailureReason)
		out.FailureMessage = d.V1Beta1.FailureMessage
	}
	return out
}

// upProvisioned is initialization.provisioned, or true when only ready
// says so (upstream v1beta1 objects have no initialization).
func upProvisioned(ready bool, init InitializationStatus) *bool {
	if init.Provisioned != nil {
		return init.Provisioned
	}
	if ready {
		return ptr.To(true)
	}
	return nil
}

func upAPIEndpoint(in APIEndpoint) infrav1.APIEndpoint {
	return infrav1.APIEndpoint{Host: in.Host, Port: toInt32(in.Port)}
}

func downAPIEndpoint(in infrav1.APIEndpoint) APIEndpoint {
	return APIEndpoint{Host: in.Host, Port: int(in.Port)}
}

func upFailureDomains(in FailureDomains) []clusterv1.FailureDomain {
	var out []clusterv1.FailureDomain
	for _, name := range slices.Sorted(maps.Keys(in)) {
		fd := clusterv1.FailureDomain{Name: name, Attributes: in[name].Attributes}
		if in[name].ControlPlane {
			fd.ControlPlane = ptr.To(true)
		}
		out = append(out, fd)
	}
	return out
}

func downFailureDomains(in []clusterv1.FailureDomain) FailureDomains {
	if in == nil {
		return nil
	}
	out := FailureDomains{}
	for _, fd := range in {
		out[fd.Name] = FailureDomainSpec{ControlPlane: ptr.Deref(fd.ControlPlane, false), Attributes: fd.Attributes}
	}
	return out
}

// Metal3ClusterTemplate.

var clusterTemplateSpecConv = direction[Metal3ClusterTemplateSpec, infrav1.Metal3ClusterTemplateSpec]{
	to: func(in *Metal3ClusterTemplateSpec) infrav1.Metal3ClusterTemplateSpec {
		return infrav1.Metal3ClusterTemplateSpec{Template: infrav1.Metal3ClusterTemplateResource{
			ObjectMeta: clusterv1.ObjectMeta(in.Template.ObjectMeta),
			Spec:       upClusterSpec(&in.Template.Spec),
		}}
	},
	back: func(in *infrav1.Metal3ClusterTemplateSpec) Metal3ClusterTemplateSpec {
		return Metal3ClusterTemplateSpec{Template: Metal3ClusterTemplateResource{
			ObjectMeta: ObjectMeta(in.Template.ObjectMeta),
			Spec:       downClusterSpec(&in.Template.Spec),
		}}
	},
}

// ConvertTo converts this Metal3ClusterTemplate to the v1beta2 hub.
func (src *Metal3ClusterTemplate) ConvertTo(dstRaw conversion.Hub) error {
	src = src.DeepCopy()
	dst, ok := dstRaw.(*infrav1.Metal3ClusterTemplate)
	if !ok {
		return wrongHub("Metal3ClusterTemplate", dstRaw)
	}
	return convertUp(partsOf(&src.ObjectMeta, &src.Spec, &noStatus{}), partsOf(&dst.ObjectMeta, &dst.Spec, &noStatus{}),
		clusterTemplateSpecConv, noStatusConv)
}

// ConvertFrom converts the v1beta2 hub to this Metal3ClusterTemplate.
func (dst *Metal3ClusterTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.Metal3ClusterTemplate)
	if !ok {
		return wrongHub("Metal3ClusterTemplate", srcRaw)
	}
	src = src.DeepCopy()
	return convertDown(partsOf(&src.ObjectMeta, &src.Spec, &noStatus{}), partsOf(&dst.ObjectMeta, &dst.Spec, &noStatus{}),
		clusterTemplateSpecConv, noStatusConv)
}

// Metal3Machine.

var (
	machineSpecConv   = direction[Metal3MachineSpec, infrav1.Metal3MachineSpec]{to: upMachineSpec, back: downMachineSpec}
	machineStatusConv = direction[Metal3MachineStatus, infrav1.Metal3MachineStatus]{to: upMachineStatus, back: downMachineStatus}
)

// ConvertTo converts this Metal3Machine to the v1beta2 hub.
func (src *Metal3Machine) ConvertTo(dstRaw conversion.Hub) error {
	src = src.DeepCopy()
	dst, ok := dstRaw.(*infrav1.Metal3Machine)
	if !ok {
		return wrongHub("Metal3Machine", dstRaw)
	}
	return convertUp(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		machineSpecConv, machineStatusConv)
}

// ConvertFrom converts the v1beta2 hub to this Metal3Machine.
func (dst *Metal3Machine) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.Metal3Machine)
	if !ok {
		return wrongHub("Metal3Machine", srcRaw)
	}
	src = src.DeepCopy()
	return convertDown(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		machineSpecConv, machineStatusConv)
}

// upMachineSpec: pointers to optional strings and to customDeploy become
// values, dataTemplate keeps only its name and namespace, an empty host
// selector none.
func upMachineSpec(in *Metal3MachineSpec) infrav1.Metal3MachineSpec {
	out := infrav1.Metal3MachineSpec{
		ProviderID:            ptr.Deref(in.ProviderID, ""),
		Image:                 upImage(in.Image),
		UserData:              in.UserData,
		HostSelector:          upHostSelector(in.HostSelector),
		DataTemplate:          upObjectRef(in.DataTemplate),
		MetaData:              in.MetaData,
		NetworkData:           in.NetworkData,
		AutomatedCleaningMode: ptr.Deref(in.AutomatedCleaningMode, ""),
		FailureDomain:         in.FailureDomain,
	}
	if in.CustomDeploy != nil {
		out.CustomDeploy = infrav1.CustomDeploy(*in.CustomDeploy)
	}
	return out
}

func downMachineSpec(in *infrav1.Metal3MachineSpec) Metal3MachineSpec {
	out := Metal3MachineSpec{
		ProviderID:            nonEmpty(in.ProviderID),
		Image:                 downImage(in.Image),
		UserData:              in.UserData,
		DataTemplate:          downObjectRef(in.DataTemplate),
		MetaData:              in.MetaData,
		NetworkData:           in.NetworkData,
		AutomatedCleaningMode: nonEmpty(in.AutomatedCleaningMode),
		FailureDomain:         in.FailureDomain,
	}
	if in.HostSelector != nil {
		out.HostSelector = downHostSelector(*in.HostSelector)
	}
	if in.CustomDeploy != (infrav1.CustomDeploy{}) {
		out.CustomDeploy = ptr.To(CustomDeploy(in.CustomDeploy))
	}
	return out
}

// upMachineStatus: ready becomes initialization.provisioned (see
// upProvisioned), failureReason and failureMessage move under
// deprecated.v1beta1; v1beta2 has no phase.
func upMachineStatus(in *Metal3MachineStatus) infrav1.Metal3MachineStatus {
	out := infrav1.Metal3MachineStatus{
		Conditions:     in.Conditions,
		LastUpdated:    in.LastUpdated,
		Addresses:      in.Addresses,
		Initialization: infrav1.Metal3MachineInitializationStatus{Provisioned: upProvisioned(in.Ready, in.Initialization)},
		UserData:       in.UserData,
		RenderedData:   upObjectRef(in.RenderedData),
		MetaData:       in.MetaData,
		NetworkData:    in.NetworkData,
	}
	if in.FailureReason != nil || in.FailureMessage != nil {
		out.Deprecated = &infrav1.Metal3MachineDeprecatedStatus{V1Beta1: &infrav1.Metal3MachineV1Beta1DeprecatedStatus{
			FailureReason:  (*capierrors.MachineStatusError)(in.FailureReason),
			FailureMessage: in.FailureMessage,
		}}
	}
	return out
}

func downMachineStatus(in *infrav1.Metal3MachineStatus) Metal3MachineStatus {
	out := Metal3MachineStatus{
		Ready:          ptr.Deref(in.Initialization.Provisioned, false),
		Initialization: InitializationStatus{Provisioned: in.Initialization.Provisioned},
		Addresses:      in.Addresses,
		UserData:       in.UserData,
		MetaData:       in.MetaData,
		NetworkData:    in.NetworkData,
		RenderedData:   downObjectRef(in.RenderedData),
		LastUpdated:    in.LastUpdated,
		Conditions:     in.Conditions,
	}
	if d := in.Deprecated; d != nil && d.V1Beta1 != nil {
		out.FailureReason = (*string)(d.V1Beta1.FailureReason)
		out.FailureMessage = d.V1Beta1.FailureMessage
	}
	return out
}

// upImage: checksum becomes a pointer, checksumType and format (named
// diskFormat in v1beta2) values.
func upImage(in Image) infrav1.Image {
	return infrav1.Image{
		URL:          in.URL,
		Checksum:     nonEmpty(in.Checksum),
		ChecksumType: ptr.Deref(in.ChecksumType, ""),
		DiskFormat:   ptr.Deref(in.DiskFormat, ""),
	}
}

func downImage(in infrav1.Image) Image {
	return Image{
		URL:          in.URL,
		Checksum:     ptr.Deref(in.Checksum, ""),
		ChecksumType: nonEmpty(in.ChecksumType),
		DiskFormat:   nonEmpty(in.DiskFormat),
	}
}

func upHostSelector(in HostSelector) *infrav1.HostSelector {
	if len(in.MatchLabels) == 0 && len(in.MatchExpressions) == 0 {
		return nil
	}
	return &infrav1.HostSelector{
		MatchLabels: in.MatchLabels,
		MatchExpressions: convertSlice(in.MatchExpressions, func(r HostSelectorRequirement) infrav1.HostSelectorRequirement {
			return infrav1.HostSelectorRequirement(r)
		}),
	}
}

func downHostSelector(in infrav1.HostSelector) HostSelector {
	return HostSelector{
		MatchLabels:      in.MatchLabels,
		MatchExpressions: convertSlice(in.MatchExpressions, func(r infrav1.HostSelectorRequirement) HostSelectorRequirement { return HostSelectorRequirement(r) }),
	}
}

// upObjectRef keeps the name and namespace of a reference.
func upObjectRef(in *corev1.ObjectReference) *infrav1.Metal3ObjectRef {
	if in == nil {
		return nil
	}
	return &infrav1.Metal3ObjectRef{Name: in.Name, Namespace: in.Namespace}
}

func downObjectRef(in *infrav1.Metal3ObjectRef) *corev1.ObjectReference {
	if in == nil {
		return nil
	}
	return &corev1.ObjectReference{Name: in.Name, Namespace: in.Namespace}
}

// upRequiredRef converts a reference v1beta1 requires and v1beta2 does
// not: an empty one is none.
func upRequiredRef(in corev1.ObjectReference) *infrav1.Metal3ObjectRef {
	if in.Name == "" && in.Namespace == "" {
		return nil
	}
	return upObjectRef(&in)
}

func downRequiredRef(in *infrav1.Metal3ObjectRef) corev1.ObjectReference {
	if in == nil {
		return corev1.ObjectReference{}
	}
	return *downObjectRef(in)
}

// Metal3MachineTemplate.

var machineTemplateSpecConv = direction[Metal3MachineTemplateSpec, infrav1.Metal3MachineTemplateSpec]{
	to: func(in *Metal3MachineTemplateSpec) infrav1.Metal3MachineTemplateSpec {
		return infrav1.Metal3MachineTemplateSpec{
			Template: infrav1.Metal3MachineTemplateResource{
				ObjectMeta: clusterv1.ObjectMeta(in.Template.ObjectMeta),
				Spec:       upMachineSpec(&in.Template.Spec),
			},
			NodeReuse: ptr.To(in.NodeReuse),
		}
	},
	back: func(in *infrav1.Metal3MachineTemplateSpec) Metal3MachineTemplateSpec {
		return Metal3MachineTemplateSpec{
			Template: Metal3MachineTemplateResource{
				ObjectMeta: ObjectMeta(in.Template.ObjectMeta),
				Spec:       downMachineSpec(&in.Template.Spec),
			},
			NodeReuse: ptr.Deref(in.NodeReuse, false),
		}
	},
}

// ConvertTo converts this Metal3MachineTemplate to the v1beta2 hub.
func (src *Metal3MachineTemplate) ConvertTo(dstRaw conversion.Hub) error {
	src = src.DeepCopy()
	dst, ok := dstRaw.(*infrav1.Metal3MachineTemplate)
	if !ok {
		return wrongHub("Metal3MachineTemplate", dstRaw)
	}
	return convertUp(partsOf(&src.ObjectMeta, &src.Spec, &noStatus{}), partsOf(&dst.ObjectMeta, &dst.Spec, &noStatus{}),
		machineTemplateSpecConv, noStatusConv)
}

// ConvertFrom converts the v1beta2 hub to this Metal3MachineTemplate.
func (dst *Metal3MachineTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.Metal3MachineTemplate)
	if !ok {
		return wrongHub("Metal3MachineTemplate", srcRaw)
	}
	src = src.DeepCopy()
	return convertDown(partsOf(&src.ObjectMeta, &src.Spec, &noStatus{}), partsOf(&dst.ObjectMeta, &dst.Spec, &noStatus{}),
		machineTemplateSpecConv, noStatusConv)
}

// Metal3Data.

var (
	dataSpecConv   = direction[Metal3DataSpec, infrav1.Metal3DataSpec]{to: upDataSpec, back: downDataSpec}
	dataStatusConv = direction[Metal3DataStatus, infrav1.Metal3DataStatus]{
		to: func(in *Metal3DataStatus) infrav1.Metal3DataStatus {
			return infrav1.Metal3DataStatus{Ready: ptr.To(in.Ready), ErrorMessage: ptr.Deref(in.ErrorMessage, "")}
		},
		back: func(in *infrav1.Metal3DataStatus) Metal3DataStatus {
			return Metal3DataStatus{Ready: ptr.Deref(in.Ready, false), ErrorMessage: nonEmpty(in.ErrorMessage)}
		},
	}
)

// ConvertTo converts this Metal3Data to the v1beta2 hub.
func (src *Metal3Data) ConvertTo(dstRaw conversion.Hub) error {
	src = src.DeepCopy()
	dst, ok := dstRaw.(*infrav1.Metal3Data)
	if !ok {
		return wrongHub("Metal3Data", dstRaw)
	}
	return convertUp(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		dataSpecConv, dataStatusConv)
}

// ConvertFrom converts the v1beta2 hub to this Metal3Data.
func (dst *Metal3Data) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.Metal3Data)
	if !ok {
		return wrongHub("Metal3Data", srcRaw)
	}
	src = src.DeepCopy()
	return convertDown(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		dataSpecConv, dataStatusConv)
}

// upDataSpec: the index becomes a pointer (0 is an index), empty claim and
// template references none; v1beta2 has no templateReference.
func upDataSpec(in *Metal3DataSpec) infrav1.Metal3DataSpec {
	return infrav1.Metal3DataSpec{
		Index:       ptr.To(toInt32(in.Index)),
		MetaData:    in.MetaData,
		NetworkData: in.NetworkData,
		Claim:       upRequiredRef(in.Claim),
		Template:    upRequiredRef(in.Template),
	}
}

func downDataSpec(in *infrav1.Metal3DataSpec) Metal3DataSpec {
	return Metal3DataSpec{
		Index:       int(ptr.Deref(in.Index, 0)),
		MetaData:    in.MetaData,
		NetworkData: in.NetworkData,
		Claim:       downRequiredRef(in.Claim),
		Template:    downRequiredRef(in.Template),
	}
}

// Metal3DataClaim.

var (
	dataClaimSpecConv = direction[Metal3DataClaimSpec, infrav1.Metal3DataClaimSpec]{
		to: func(in *Metal3DataClaimSpec) infrav1.Metal3DataClaimSpec {
			return infrav1.Metal3DataClaimSpec{Template: upRequiredRef(in.Template)}
		},
		back: func(in *infrav1.Metal3DataClaimSpec) Metal3DataClaimSpec {
			return Metal3DataClaimSpec{Template: downRequiredRef(in.Template)}
		},
	}
	dataClaimStatusConv = direction[Metal3DataClaimStatus, infrav1.Metal3DataClaimStatus]{
		to: func(in *Metal3DataClaimStatus) infrav1.Metal3DataClaimStatus {
			return infrav1.Metal3DataClaimStatus{RenderedData: upObjectRef(in.RenderedData), ErrorMessage: ptr.Deref(in.ErrorMessage, "")}
		},
		back: func(in *infrav1.Metal3DataClaimStatus) Metal3DataClaimStatus {
			return Metal3DataClaimStatus{RenderedData: downObjectRef(in.RenderedData), ErrorMessage: nonEmpty(in.ErrorMessage)}
		},
	}
)

// ConvertTo converts this Metal3DataClaim to the v1beta2 hub.
func (src *Metal3DataClaim) ConvertTo(dstRaw conversion.Hub) error {
	src = src.DeepCopy()
	dst, ok := dstRaw.(*infrav1.Metal3DataClaim)
	if !ok {
		return wrongHub("Metal3DataClaim", dstRaw)
	}
	return convertUp(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		dataClaimSpecConv, dataClaimStatusConv)
}

// ConvertFrom converts the v1beta2 hub to this Metal3DataClaim.
func (dst *Metal3DataClaim) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.Metal3DataClaim)
	if !ok {
		return wrongHub("Metal3DataClaim", srcRaw)
	}
	src = src.DeepCopy()
	return convertDown(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		dataClaimSpecConv, dataClaimStatusConv)
}

// Metal3Remediation and Metal3RemediationTemplate.

var (
	remediationSpecConv = direction[Metal3RemediationSpec, infrav1.Metal3RemediationSpec]{
		to: upRemediationSpec, back: downRemediationSpec,
	}
	remediationStatusConv = direction[Metal3RemediationStatus, infrav1.Metal3RemediationStatus]{
		to: func(in *Metal3RemediationStatus) infrav1.Metal3RemediationStatus {
			return infrav1.Metal3RemediationStatus{Phase: in.Phase, RetryCount: toInt32(in.RetryCount), LastRemediated: in.LastRemediated}
		},
		back: func(in *infrav1.Metal3RemediationStatus) Metal3RemediationStatus {
			return Metal3RemediationStatus{Phase: in.Phase, RetryCount: int(in.RetryCount), LastRemediated: in.LastRemediated}
		},
	}
	remediationTemplateSpecConv = direction[Metal3RemediationTemplateSpec, infrav1.Metal3RemediationTemplateSpec]{
		to: func(in *Metal3RemediationTemplateSpec) infrav1.Metal3RemediationTemplateSpec {
			return infrav1.Metal3RemediationTemplateSpec{Template: infrav1.Metal3RemediationTemplateResource{Spec: upRemediationSpec(&in.Template.Spec)}}
		},
		back: func(in *infrav1.Metal3RemediationTemplateSpec) Metal3RemediationTemplateSpec {
			return Metal3RemediationTemplateSpec{Template: Metal3RemediationTemplateResource{Spec: downRemediationSpec(&in.Template.Spec)}}
		},
	}
	remediationTemplateStatusConv = direction[Metal3RemediationTemplateStatus, infrav1.Metal3RemediationTemplateStatus]{
		to: func(in *Metal3RemediationTemplateStatus) infrav1.Metal3RemediationTemplateStatus {
			return infrav1.Metal3RemediationTemplateStatus{Status: remediationStatusConv.to(&in.Status)}
		},
		back: func(in *infrav1.Metal3RemediationTemplateStatus) Metal3RemediationTemplateStatus {
			return Metal3RemediationTemplateStatus{Status: remediationStatusConv.back(&in.Status)}
		},
	}
)

// upRemediationSpec: timeout becomes whole seconds.
func upRemediationSpec(in *Metal3RemediationSpec) infrav1.Metal3RemediationSpec {
	if in.Strategy == nil {
		return infrav1.Metal3RemediationSpec{}
	}
	return infrav1.Metal3RemediationSpec{Strategy: &infrav1.RemediationStrategy{
		Type:           infrav1.RemediationType(in.Strategy.Type),
		RetryLimit:     toInt32(in.Strategy.RetryLimit),
		TimeoutSeconds: ptr.Deref(clusterv1.ConvertToSeconds(in.Strategy.Timeout), 0),
	}}
}

func downRemediationSpec(in *infrav1.Metal3RemediationSpec) Metal3RemediationSpec {
	if in.Strategy == nil {
		return Metal3RemediationSpec{}
	}
	out := &RemediationStrategy{Type: RemediationType(in.Strategy.Type), RetryLimit: int(in.Strategy.RetryLimit)}
	if in.Strategy.TimeoutSeconds != 0 {
		out.Timeout = clusterv1.ConvertFromSeconds(&in.Strategy.TimeoutSeconds)
	}
	return Metal3RemediationSpec{Strategy: out}
}

// ConvertTo converts this Metal3Remediation to the v1beta2 hub.
func (src *Metal3Remediation) ConvertTo(dstRaw conversion.Hub) error {
	src = src.DeepCopy()
	dst, ok := dstRaw.(*infrav1.Metal3Remediation)
	if !ok {
		return wrongHub("Metal3Remediation", dstRaw)
	}
	return convertUp(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		remediationSpecConv, remediationStatusConv)
}

// ConvertFrom converts the v1beta2 hub to this Metal3Remediation.
func (dst *Metal3Remediation) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.Metal3Remediation)
	if !ok {
		return wrongHub("Metal3Remediation", srcRaw)
	}
	src = src.DeepCopy()
	return convertDown(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		remediationSpecConv, remediationStatusConv)
}

// ConvertTo converts this Metal3RemediationTemplate to the v1beta2 hub.
func (src *Metal3RemediationTemplate) ConvertTo(dstRaw conversion.Hub) error {
	src = src.DeepCopy()
	dst, ok := dstRaw.(*infrav1.Metal3RemediationTemplate)
	if !ok {
		return wrongHub("Metal3RemediationTemplate", dstRaw)
	}
	return convertUp(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		remediationTemplateSpecConv, remediationTemplateStatusConv)
}

// ConvertFrom converts the v1beta2 hub to this Metal3RemediationTemplate.
func (dst *Metal3RemediationTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.Metal3RemediationTemplate)
	if !ok {
		return wrongHub("Metal3RemediationTemplate", srcRaw)
	}
	src = src.DeepCopy()
	return convertDown(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		remediationTemplateSpecConv, remediationTemplateStatusConv)
}

// Helpers.

// convertSlice converts each element; nil stays nil.
func convertSlice[A, B any](in []A, f func(A) B) []B {
	if in == nil {
		return nil
	}
	out := make([]B, len(in))
	for i := range in {
		out[i] = f(in[i])
	}
	return out
}

// nonEmpty points at s, or is nil for the empty string.
func nonEmpty[S ~string](s S) *S {
	if s == "" {
		return nil
	}
	return &s
}

// toInt32 narrows v, saturating; a value out of range is kept by the
// conversion record.
func toInt32(v int) int32 {
	switch {
	case v > math.MaxInt32:
		return math.MaxInt32
	case v < math.MinInt32:
		return math.MinInt32
	}
	return int32(v)
}

// Metal3DataTemplate.

var (
	dataTemplateSpecConv = direction[Metal3DataTemplateSpec, infrav1.Metal3DataTemplateSpec]{
		to: upDataTemplateSpec, back: downDataTemplateSpec,
	}
	dataTemplateStatusConv = direction[Metal3DataTemplateStatus, infrav1.Metal3DataTemplateStatus]{
		to: upDataTemplateStatus, back: downDataTemplateStatus,
	}
)

// ConvertTo converts this Metal3DataTemplate to the v1beta2 hub.
func (src *Metal3DataTemplate) ConvertTo(dstRaw conversion.Hub) error {
	src = src.DeepCopy()
	dst, ok := dstRaw.(*infrav1.Metal3DataTemplate)
	if !ok {
		return wrongHub("Metal3DataTemplate", dstRaw)
	}
	return convertUp(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		dataTemplateSpecConv, dataTemplateStatusConv)
}

// ConvertFrom converts the v1beta2 hub to this Metal3DataTemplate.
func (dst *Metal3DataTemplate) ConvertFrom(srcRaw conversion.Hub) error {
	src, ok := srcRaw.(*infrav1.Metal3DataTemplate)
	if !ok {
		return wrongHub("Metal3DataTemplate", srcRaw)
	}
	src = src.DeepCopy()
	return convertDown(partsOf(&src.ObjectMeta, &src.Spec, &src.Status), partsOf(&dst.ObjectMeta, &dst.Spec, &dst.Status),
		dataTemplateSpecConv, dataTemplateStatusConv)
}

// upDataTemplateSpec: v1beta2 has no templateReference.
func upDataTemplateSpec(in *Metal3DataTemplateSpec) infrav1.Metal3DataTemplateSpec {
	out := infrav1.Metal3DataTemplateSpec{ClusterName: in.ClusterName}
	if in.MetaData != nil {
		out.MetaData = ptr.To(upMetaData(in.MetaData))
	}
	if in.NetworkData != nil {
		out.NetworkData = ptr.To(upNetworkData(in.NetworkData))
	}
	return out
}

func downDataTemplateSpec(in *infrav1.Metal3DataTemplateSpec) Metal3DataTemplateSpec {
	out := Metal3DataTemplateSpec{ClusterName: in.ClusterName}
	if in.MetaData != nil {
		out.MetaData = ptr.To(downMetaData(in.MetaData))
	}
	if in.NetworkData != nil {
		out.NetworkData = ptr.To(downNetworkData(in.NetworkData))
	}
	return out
}

// upDataTemplateStatus: the map of claim name to index becomes a list
// sorted by index, then name.
func upDataTemplateStatus(in *Metal3DataTemplateStatus) infrav1.Metal3DataTemplateStatus {
	out := infrav1.Metal3DataTemplateStatus{LastUpdated: in.LastUpdated}
	for _, name := range slices.Sorted(maps.Keys(in.Indexes)) {
		out.Indexes = append(out.Indexes, infrav1.IndexEntry{Name: name, Index: ptr.To(toInt32(in.Indexes[name]))})
	}
	slices.SortStableFunc(out.Indexes, func(a, b infrav1.IndexEntry) int { return cmpInt32(*a.Index, *b.Index) })
	return out
}

func downDataTemplateStatus(in *infrav1.Metal3DataTemplateStatus) Metal3DataTemplateStatus {
	out := Metal3DataTemplateStatus{LastUpdated: in.LastUpdated}
	if in.Indexes != nil {
		out.Indexes = map[string]int{}
	}
	for _, e := range in.Indexes {
		out.Indexes[e.Name] = int(ptr.Deref(e.Index, 0))
	}
	return out
}

func cmpInt32(a, b int32) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// upMetaData: three lists are renamed (…FromIPPool to …FromPool), index
// offsets and fromBootMAC become pointers.
func upMetaData(in *MetaData) infrav1.MetaData {
	return infrav1.MetaData{
		Strings:     convertSlice(in.Strings, func(v MetaDataString) infrav1.MetaDataString { return infrav1.MetaDataString(v) }),
		ObjectNames: convertSlice(in.ObjectNames, func(v MetaDataObjectName) infrav1.MetaDataObjectName { return infrav1.MetaDataObjectName(v) }),
		Indexes: convertSlice(in.Indexes, func(v MetaDataIndex) infrav1.MetaDataIndex {
			out := infrav1.MetaDataIndex{Key: v.Key, Step: toInt32(v.Step), Prefix: v.Prefix, Suffix: v.Suffix}
			if v.Offset != 0 {
				out.Offset = ptr.To(toInt32(v.Offset))
			}
			return out
		}),
		Namespaces:          convertSlice(in.Namespaces, func(v MetaDataNamespace) infrav1.MetaDataNamespace { return infrav1.MetaDataNamespace(v) }),
		IPAddressesFromPool: convertSlice(in.IPAddressesFromPool, upFromPool),
		PrefixesFromPool:    convertSlice(in.PrefixesFromPool, upFromPool),
		GatewaysFromPool:    convertSlice(in.GatewaysFromPool, upFromPool),
		DNSServersFromPool:  convertSlice(in.DNSServersFromPool, upFromPool),
		FromHostInterfaces: convertSlice(in.FromHostInterfaces, func(v MetaDataHostInterface) infrav1.MetaDataHostInterface {
			out := infrav1.MetaDataHostInterface{Key: v.Key, Interface: v.Interface}
			if v.FromBootMAC {
				out.FromBootMAC = ptr.To(true)
			}
			return out
		}),
		FromLabels: convertSlice(in.FromLabels, func(v MetaDataFromLabel) infrav1.MetaDataFromLabel { return infrav1.MetaDataFromLabel(v) }),
		FromAnnotations: convertSlice(in.FromAnnotations, func(v MetaDataFromAnnotation) infrav1.MetaDataFromAnnotation {
			return infrav1.MetaDataFromAnnotation(v)
		}),
	}
}

func downMetaData(in *infrav1.MetaData) MetaData {
	return MetaData{
		Strings:     convertSlice(in.Strings, func(v infrav1.MetaDataString) MetaDataString { return MetaDataString(v) }),
		ObjectNames: convertSlice(in.ObjectNames, func(v infrav1.MetaDataObjectName) MetaDataObjectName { return MetaDataObjectName(v) }),
		Indexes: convertSlice(in.Indexes, func(v infrav1.MetaDataIndex) MetaDataIndex {
			return MetaDataIndex{Key: v.Key, Offset: int(ptr.Deref(v.Offset, 0)), Step: int(v.Step), Prefix: v.Prefix, Suffix: v.Suffix}
		}),
		Namespaces:          convertSlice(in.Namespaces, func(v infrav1.MetaDataNamespace) MetaDataNamespace { return MetaDataNamespace(v) }),
		IPAddressesFromPool: convertSlice(in.IPAddressesFromPool, downFromPool),
		PrefixesFromPool:    convertSlice(in.PrefixesFromPool, downFromPool),
		GatewaysFromPool:    convertSlice(in.GatewaysFromPool, downFromPool),
		DNSServersFromPool:  convertSlice(in.DNSServersFromPool, downFromPool),
		FromHostInterfaces: convertSlice(in.FromHostInterfaces, func(v infrav1.MetaDataHostInterface) MetaDataHostInterface {
			return MetaDataHostInterface{Key: v.Key, Interface: v.Interface, FromBootMAC: ptr.Deref(v.FromBootMAC, false)}
		}),
		FromLabels:      convertSlice(in.FromLabels, func(v infrav1.MetaDataFromLabel) MetaDataFromLabel { return MetaDataFromLabel(v) }),
		FromAnnotations: convertSlice(in.FromAnnotations, func(v infrav1.MetaDataFromAnnotation) MetaDataFromAnnotation { return MetaDataFromAnnotation(v) }),
	}
}

func upFromPool(v FromPool) infrav1.FromPool   { return infrav1.FromPool(v) }
func downFromPool(v infrav1.FromPool) FromPool { return FromPool(v) }

// upNetworkData: links, networks and services become pointers (none when
// empty).
func upNetworkData(in *NetworkData) infrav1.NetworkData {
	out := infrav1.NetworkData{}
	if l := in.Links; len(l.Ethernets)+len(l.Bonds)+len(l.Vlans) > 0 {
		out.Links = &infrav1.NetworkDataLink{
			Ethernets: convertSlice(l.Ethernets, upEthernet),
			Bonds:     convertSlice(l.Bonds, upBond),
			Vlans:     convertSlice(l.Vlans, upVlan),
		}
	}
	if n := in.Networks; len(n.IPv4)+len(n.IPv6)+len(n.IPv4DHCP)+len(n.IPv6DHCP)+len(n.IPv6SLAAC) > 0 {
		out.Networks = &infrav1.NetworkDataNetwork{
			IPv4:      convertSlice(n.IPv4, upIPv4),
			IPv6:      convertSlice(n.IPv6, upIPv6),
			IPv4DHCP:  convertSlice(n.IPv4DHCP, upIPv4DHCP),
			IPv6DHCP:  convertSlice(n.IPv6DHCP, upIPv6DHCP),
			IPv6SLAAC: convertSlice(n.IPv6SLAAC, upIPv6DHCP),
		}
	}
	if s := in.Services; len(s.DNS) > 0 || s.DNSFromIPPool != nil {
		out.Services = &infrav1.NetworkDataService{DNS: s.DNS, DNSFromIPPool: ptr.Deref(s.DNSFromIPPool, "")}
	}
	return out
}

func downNetworkData(in *infrav1.NetworkData) NetworkData {
	out := NetworkData{}
	if l := in.Links; l != nil {
		out.Links = NetworkDataLink{
			Ethernets: convertSlice(l.Ethernets, downEthernet),
			Bonds:     convertSlice(l.Bonds, downBond),
			Vlans:     convertSlice(l.Vlans, downVlan),
		}
	}
	if n := in.Networks; n != nil {
		out.Networks = NetworkDataNetwork{
			IPv4:      convertSlice(n.IPv4, downIPv4),
			IPv6:      convertSlice(n.IPv6, downIPv6),
			IPv4DHCP:  convertSlice(n.IPv4DHCP, downIPv4DHCP),
			IPv6DHCP:  convertSlice(n.IPv6DHCP, downIPv6DHCP),
			IPv6SLAAC: convertSlice(n.IPv6SLAAC, downIPv6DHCP),
		}
	}
	if s := in.Services; s != nil {
		out.Services = NetworkDataService{DNS: s.DNS, DNSFromIPPool: nonEmpty(s.DNSFromIPPool)}
	}
	return out
}

func upEthernet(v NetworkDataLinkEthernet) infrav1.NetworkDataLinkEthernet {
	return infrav1.NetworkDataLinkEthernet{Type: v.Type, ID: v.ID, Name: v.Name, MTU: toInt32(v.MTU), MACAddress: upMAC(v.MACAddress)}
}

func downEthernet(v infrav1.NetworkDataLinkEthernet) NetworkDataLinkEthernet {
	return NetworkDataLinkEthernet{Type: v.Type, ID: v.ID, Name: v.Name, MTU: int(v.MTU), MACAddress: downMAC(v.MACAddress)}
}

// upBond: the parameters' map becomes a list sorted by name.
func upBond(v NetworkDataLinkBond) infrav1.NetworkDataLinkBond {
	out := infrav1.NetworkDataLinkBond{
		BondMode: v.BondMode, BondXmitHashPolicy: v.BondXmitHashPolicy, ID: v.ID, Name: v.Name,
		MTU: toInt32(v.MTU), MACAddress: upMAC(v.MACAddress), BondLinks: v.BondLinks,
	}
	for _, name := range slices.Sorted(maps.Keys(v.Parameters)) {
		out.Parameters = append(out.Parameters, infrav1.NetworkDataLinkBondParam{Name: name, Value: v.Parameters[name]})
	}
	return out
}

func downBond(v infrav1.NetworkDataLinkBond) NetworkDataLinkBond {
	out := NetworkDataLinkBond{
		BondMode: v.BondMode, BondXmitHashPolicy: v.BondXmitHashPolicy, ID: v.ID, Name: v.Name,
		MTU: int(v.MTU), MACAddress: downMAC(v.MACAddress), BondLinks: v.BondLinks,
	}
	if v.Parameters != nil {
		out.Parameters = NetworkDataLinkBondParams{}
	}
	for _, p := range v.Parameters {
		out.Parameters[p.Name] = p.Value
	}
	return out
}

// upVlan: the VLAN id becomes a pointer (0 is an id).
func upVlan(v NetworkDataLinkVlan) infrav1.NetworkDataLinkVlan {
	return infrav1.NetworkDataLinkVlan{
		VlanID: ptr.To(toInt32(v.VlanID)), ID: v.ID, Name: v.Name, MTU: toInt32(v.MTU),
		MACAddress: upMAC(v.MACAddress), VlanLink: v.VlanLink,
	}
}

func downVlan(v infrav1.NetworkDataLinkVlan) NetworkDataLinkVlan {
	return NetworkDataLinkVlan{
		VlanID: int(ptr.Deref(v.VlanID, 0)), ID: v.ID, Name: v.Name, MTU: int(v.MTU),
		MACAddress: downMAC(v.MACAddress), VlanLink: v.VlanLink,
	}
}

// upMAC: the three sources become values.
func upMAC(in *NetworkLinkEthernetMac) *infrav1.NetworkLinkEthernetMac {
	if in == nil {
		return nil
	}
	out := &infrav1.NetworkLinkEthernetMac{String: ptr.Deref(in.String, ""), FromHostInterface: ptr.Deref(in.FromHostInterface, "")}
	if in.FromAnnotation != nil {
		out.FromAnnotation = infrav1.NetworkLinkEthernetMacFromAnnotation(*in.FromAnnotation)
	}
	return out
}

func downMAC(in *infrav1.NetworkLinkEthernetMac) *NetworkLinkEthernetMac {
	if in == nil {
		return nil
	}
	out := &NetworkLinkEthernetMac{String: nonEmpty(in.String), FromHostInterface: nonEmpty(in.FromHostInterface)}
	if in.FromAnnotation != (infrav1.NetworkLinkEthernetMacFromAnnotation{}) {
		out.FromAnnotation = ptr.To(NetworkLinkEthernetMacFromAnnotation(in.FromAnnotation))
	}
	return out
}

// upPoolRef: a pool reference and an annotation naming a pool become
// values.
func upPoolRef(ref *corev1.TypedLocalObjectReference, ann *FromPoolAnnotation) (infrav1.IPPoolReference, infrav1.FromPoolAnnotation) {
	var outRef infrav1.IPPoolReference
	var outAnn infrav1.FromPoolAnnotation
	if ref != nil {
		outRef = infrav1.IPPoolReference{Name: ref.Name, Kind: ref.Kind, APIGroup: ptr.Deref(ref.APIGroup, "")}
	}
	if ann != nil {
		outAnn = infrav1.FromPoolAnnotation(*ann)
	}
	return outRef, outAnn
}

func downPoolRef(ref infrav1.IPPoolReference, ann infrav1.FromPoolAnnotation) (*corev1.TypedLocalObjectReference, *FromPoolAnnotation) {
	var outRef *corev1.TypedLocalObjectReference
	var outAnn *FromPoolAnnotation
	if ref != (infrav1.IPPoolReference{}) {
		outRef = &corev1.TypedLocalObjectReference{Name: ref.Name, Kind: ref.Kind, APIGroup: nonEmpty(ref.APIGroup)}
	}
	if ann != (infrav1.FromPoolAnnotation{}) {
		outAnn = ptr.To(FromPoolAnnotation(ann))
	}
	return outRef, outAnn
}

func upIPv4(v NetworkDataIPv4) infrav1.NetworkDataIPv4 {
	out := infrav1.NetworkDataIPv4{ID: v.ID, Link: v.Link, IPAddressFromIPPool: v.IPAddressFromIPPool, Routes: convertSlice(v.Routes, upRoutev4)}
	out.FromPoolRef, out.FromPoolAnnotation = upPoolRef(v.FromPoolRef, v.FromPoolAnnotation)
	return out
}

func downIPv4(v infrav1.NetworkDataIPv4) NetworkDataIPv4 {
	out := NetworkDataIPv4{ID: v.ID, Link: v.Link, IPAddressFromIPPool: v.IPAddressFromIPPool, Routes: convertSlice(v.Routes, downRoutev4)}
	out.FromPoolRef, out.FromPoolAnnotation = downPoolRef(v.FromPoolRef, v.FromPoolAnnotation)
	return out
}

func upIPv6(v NetworkDataIPv6) infrav1.NetworkDataIPv6 {
	out := infrav1.NetworkDataIPv6{ID: v.ID, Link: v.Link, IPAddressFromIPPool: v.IPAddressFromIPPool, Routes: convertSlice(v.Routes, upRoutev6)}
	out.FromPoolRef, out.FromPoolAnnotation = upPoolRef(v.FromPoolRef, v.FromPoolAnnotation)
	return out
}

func downIPv6(v infrav1.NetworkDataIPv6) NetworkDataIPv6 {
	out := NetworkDataIPv6{ID: v.ID, Link: v.Link, IPAddressFromIPPool: v.IPAddressFromIPPool, Routes: convertSlice(v.Routes, downRoutev6)}
	out.FromPoolRef, out.FromPoolAnnotation = downPoolRef(v.FromPoolRef, v.FromPoolAnnotation)
	return out
}

func upIPv4DHCP(v NetworkDataIPv4DHCP) infrav1.NetworkDataIPv4DHCP {
	return infrav1.NetworkDataIPv4DHCP{ID: v.ID, Link: v.Link, Routes: convertSlice(v.Routes, upRoutev4)}
}

func downIPv4DHCP(v infrav1.NetworkDataIPv4DHCP) NetworkDataIPv4DHCP {
	return NetworkDataIPv4DHCP{ID: v.ID, Link: v.Link, Routes: convertSlice(v.Routes, downRoutev4)}
}

func upIPv6DHCP(v NetworkDataIPv6DHCP) infrav1.NetworkDataIPv6DHCP {
	return infrav1.NetworkDataIPv6DHCP{ID: v.ID, Link: v.Link, Routes: convertSlice(v.Routes, upRoutev6)}
}

func downIPv6DHCP(v infrav1.NetworkDataIPv6DHCP) NetworkDataIPv6DHCP {
	return NetworkDataIPv6DHCP{ID: v.ID, Link: v.Link, Routes: convertSlice(v.Routes, downRoutev6)}
}

// upRoutev4: the prefix becomes a pointer (none for 0), the services too
// (none when empty), and the gateway's pool name a value.
func upRoutev4(v NetworkDataRoutev4) infrav1.NetworkDataRoutev4 {
	out := infrav1.NetworkDataRoutev4{Network: v.Network, Prefix: nonZero(v.Prefix)}
	out.Gateway = infrav1.NetworkGatewayv4{String: v.Gateway.String, FromIPPool: ptr.Deref(v.Gateway.FromIPPool, "")}
	out.Gateway.FromPoolRef, out.Gateway.FromPoolAnnotation = upPoolRef(v.Gateway.FromPoolRef, v.Gateway.FromPoolAnnotation)
	if len(v.Services.DNS) > 0 || v.Services.DNSFromIPPool != nil {
		out.Services = &infrav1.NetworkDataServicev4{DNS: v.Services.DNS, DNSFromIPPool: ptr.Deref(v.Services.DNSFromIPPool, "")}
	}
	return out
}

func downRoutev4(v infrav1.NetworkDataRoutev4) NetworkDataRoutev4 {
	out := NetworkDataRoutev4{Network: v.Network, Prefix: int(ptr.Deref(v.Prefix, 0))}
	out.Gateway = NetworkGatewayv4{String: v.Gateway.String, FromIPPool: nonEmpty(v.Gateway.FromIPPool)}
	out.Gateway.FromPoolRef, out.Gateway.FromPoolAnnotation = downPoolRef(v.Gateway.FromPoolRef, v.Gateway.FromPoolAnnotation)
	if v.Services != nil {
		out.Services = NetworkDataServicev4{DNS: v.Services.DNS, DNSFromIPPool: nonEmpty(v.Services.DNSFromIPPool)}
	}
	return out
}

// upRoutev6 is upRoutev4 for IPv6.
func upRoutev6(v NetworkDataRoutev6) infrav1.NetworkDataRoutev6 {
	out := infrav1.NetworkDataRoutev6{Network: v.Network, Prefix: nonZero(v.Prefix)}
	out.Gateway = infrav1.NetworkGatewayv6{String: v.Gateway.String, FromIPPool: ptr.Deref(v.Gateway.FromIPPool, "")}
	out.Gateway.FromPoolRef, out.Gateway.FromPoolAnnotation = upPoolRef(v.Gateway.FromPoolRef, v.Gateway.FromPoolAnnotation)
	if len(v.Services.DNS) > 0 || v.Services.DNSFromIPPool != nil {
		out.Services = &infrav1.NetworkDataServicev6{DNS: v.Services.DNS, DNSFromIPPool: ptr.Deref(v.Services.DNSFromIPPool, "")}
	}
	return out
}

func downRoutev6(v infrav1.NetworkDataRoutev6) NetworkDataRoutev6 {
	out := NetworkDataRoutev6{Network: v.Network, Prefix: int(ptr.Deref(v.Prefix, 0))}
	out.Gateway = NetworkGatewayv6{String: v.Gateway.String, FromIPPool: nonEmpty(v.Gateway.FromIPPool)}
	out.Gateway.FromPoolRef, out.Gateway.FromPoolAnnotation = downPoolRef(v.Gateway.FromPoolRef, v.Gateway.FromPoolAnnotation)
	if v.Services != nil {
		out.Services = NetworkDataServicev6{DNS: v.Services.DNS, DNSFromIPPool: nonEmpty(v.Services.DNSFromIPPool)}
	}
	return out
}

// nonZero points at v narrowed to int32, or is nil for 0.
func nonZero(v int) *int32 {
	if v == 0 {
		return nil
	}
	return ptr.To(toInt32(v))
}
