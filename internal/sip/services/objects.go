package services

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	sipv1 "github.com/airshipit/airship-go/api/sip/v1"
)

// builder makes the objects of one SIPCluster's services.
type builder struct {
	cluster *sipv1.SIPCluster
	hosts   []Host // sorted by name
	// connectorSecrets: Inputs.ConnectorSecrets.
	connectorSecrets map[string]*corev1.Secret
}

// selector selects the pods of service name.
func (b *builder) selector(name string) map[string]string {
	return map[string]string{sipv1.ClusterNameLabel: b.cluster.Name, ServiceLabel: name}
}

// meta is the metadata of every object of service name: in the cluster's
// namespace, labelled, and owned by the cluster so that deleting it
// collects them.
func (b *builder) meta(service, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       b.cluster.Namespace,
		Labels:          b.selector(service),
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(b.cluster, sipv1.GroupVersion.WithKind("SIPCluster"))},
	}
}

func (b *builder) configMap(service string, data map[string]string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: b.meta(service, service),
		Data:       data,
	}
}

func (b *builder) secret(service, name string, data map[string][]byte) *corev1.Secret {
	return &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: b.meta(service, name),
		Type:       corev1.SecretTypeOpaque,
		Data:       data,
	}
}

// workload is what differs between the services' Deployments.
type workload struct {
	name string
	svc  sipv1.SIPClusterService
	// config is the data the pod reads only when it starts; its hash goes
	// into the pod template. Never a Secret's data: a hash of a short
	// password can be reversed by guessing.
	config map[string]string
	// pod holds the containers, volumes and security context.
	pod corev1.PodSpec
}

// deployment runs w with one replica, on the nodes spec.nodeLabels picks
// (tolerating the taints spec.tolerations lists), without a service account
// token (no service talks to the API server).
func (b *builder) deployment(w workload) *appsv1.Deployment {
	pod := w.pod
	if len(w.svc.NodeLabels) > 0 {
		pod.NodeSelector = maps.Clone(w.svc.NodeLabels)
	}
	if len(w.svc.Tolerations) > 0 {
		pod.Tolerations = slices.Clone(w.svc.Tolerations)
	}
	pod.AutomountServiceAccountToken = ptr.To(false)
	pod.EnableServiceLinks = ptr.To(false)
	if pod.SecurityContext == nil {
		pod.SecurityContext = &corev1.PodSecurityContext{}
	}
	pod.SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: b.meta(w.name, w.name),
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: b.selector(w.name)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{
					Labels:      b.selector(w.name),
					Annotations: map[string]string{ConfigHashAnnotation: configHash(w.config)},
				},
				Spec: pod,
			},
		},
	}
}

// service exposes service name's pods on node ports.
func (b *builder) service(name string, svc sipv1.SIPClusterService, ports []corev1.ServicePort) *corev1.Service {
	s := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: b.meta(name, name),
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeNodePort,
			Selector: b.selector(name),
			Ports:    ports,
		},
	}
	if svc.ClusterIP != nil && *svc.ClusterIP != "" {
		s.Spec.ClusterIP = *svc.ClusterIP
	}
	return s
}

// servicePort forwards port (a node port too) to the same container port.
func servicePort(name string, port, nodePort int) corev1.ServicePort {
	return corev1.ServicePort{
		Name:       name,
		Protocol:   corev1.ProtocolTCP,
		Port:       int32(port),
		TargetPort: intstr.FromInt32(int32(port)),
		NodePort:   int32(nodePort),
	}
}

// container is a service's container, with resource requests; one with
// ports is ready when the first accepts connections.
func container(name, image string, ports []corev1.ContainerPort) corev1.Container {
	c := corev1.Container{
		Name:            name,
		Image:           image,
		ImagePullPolicy: corev1.PullIfNotPresent,
		Ports:           ports,
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{
			corev1.ResourceCPU:    resource.MustParse("50m"),
			corev1.ResourceMemory: resource.MustParse("64Mi"),
		}},
	}
	if len(ports) > 0 {
		c.ReadinessProbe = &corev1.Probe{
			ProbeHandler:  corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(ports[0].ContainerPort)}},
			PeriodSeconds: 10,
		}
	}
	return c
}

// nonRoot runs a container as uid (and gid) with nothing more than it
// needs. The root file system is read-only: HAProxy and Dex write nothing.
func nonRoot(uid int64) *corev1.SecurityContext {
	return &corev1.SecurityContext{
		RunAsNonRoot:             ptr.To(true),
		RunAsUser:                ptr.To(uid),
		RunAsGroup:               ptr.To(uid),
		AllowPrivilegeEscalation: ptr.To(false),
		ReadOnlyRootFilesystem:   ptr.To(true),
		Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
	}
}

// configHash is the SHA-256 of data, keys in order.
func configHash(data map[string]string) string {
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(data)) {
		h.Write([]byte(k))
		h.Write([]byte{0})
		h.Write([]byte(data[k]))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func status(name, typ, message string) sipv1.ServiceStatus {
	return sipv1.ServiceStatus{Name: name, Type: typ, Ready: false, Message: message}
}
