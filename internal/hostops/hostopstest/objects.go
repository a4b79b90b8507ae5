package hostopstest

import (
	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CredentialsName is the name of the BMC Secret of a host made by BareMetalHost.
func CredentialsName(host string) string { return host + "-bmc-secret" }

// BareMetalHost returns a host whose BMC is at address, with credentials
// in the Secret CredentialsName(name) names.
func BareMetalHost(namespace, name, address string, labels map[string]string) *metal3v1alpha1.BareMetalHost {
	return &metal3v1alpha1.BareMetalHost{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name, Labels: labels},
		Spec: metal3v1alpha1.BareMetalHostSpec{
			BMC: metal3v1alpha1.BMCDetails{Address: address, CredentialsName: CredentialsName(name)},
		},
	}
}

// Secret returns a BMC credentials Secret.
func Secret(namespace, name, username, password string) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data:       map[string][]byte{"username": []byte(username), "password": []byte(password)},
	}
}
