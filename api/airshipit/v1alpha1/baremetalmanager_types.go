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

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// +kubebuilder:object:root=true

// BaremetalManager is the executor that runs power and boot operations
// against bare-metal hosts through their BMCs.
type BaremetalManager struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	// spec of the operation.
	// +required
	Spec BaremetalManagerSpec `json:"spec"`
}

// BaremetalOperation is an operation on a host.
// +kubebuilder:validation:Enum=reboot;power-off;power-on;remote-direct;eject-virtual-media
type BaremetalOperation string

// Bare-metal operations.
const (
	BaremetalOperationReboot            BaremetalOperation = "reboot"
	BaremetalOperationPowerOff          BaremetalOperation = "power-off"
	BaremetalOperationPowerOn           BaremetalOperation = "power-on"
	BaremetalOperationRemoteDirect      BaremetalOperation = "remote-direct"
	BaremetalOperationEjectVirtualMedia BaremetalOperation = "eject-virtual-media"
)

// BaremetalManagerSpec says what to do to which hosts.
type BaremetalManagerSpec struct {
	// operation to run.
	// +required
	Operation BaremetalOperation `json:"operation"`
	// hostSelector picks the BareMetalHosts of the inventory.
	// +optional
	HostSelector BaremetalHostSelector `json:"hostSelector,omitempty"`
	// operationOptions hold per-operation settings.
	// +optional
	OperationOptions BaremetalOperationOptions `json:"operationOptions,omitempty"`
	// timeout in seconds (default 300).
	// +optional
	Timeout int `json:"timeout,omitempty"`
}

// BaremetalOperationOptions hold per-operation settings.
type BaremetalOperationOptions struct {
	// remoteDirect boots a host from an ISO.
	// +optional
	RemoteDirect RemoteDirectOptions `json:"remoteDirect,omitempty"`
}

// RemoteDirectOptions configure remote-direct.
type RemoteDirectOptions struct {
	// isoURL is the image to boot.
	// +optional
	ISOURL string `json:"isoURL,omitempty"`
}

// BaremetalHostSelector picks hosts by name, namespace and labels.
type BaremetalHostSelector struct {
	// labelSelector over BareMetalHost labels.
	// +optional
	LabelSelector string `json:"labelSelector,omitempty"`
	// name of one host.
	// +optional
	Name string `json:"name,omitempty"`
	// namespace of the hosts.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}
