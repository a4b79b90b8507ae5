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
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// +kubebuilder:object:root=true

// Config is the airshipctl configuration file (~/.airship/config): which
// site manifests exist, which contexts use them, and which one is current.
type Config struct {
	metav1.TypeMeta `json:",inline"`
	// contexts by name.
	// +optional
	Contexts map[string]*Context `json:"contexts"`
	// currentContext is the context commands use unless told otherwise.
	// +optional
	CurrentContext string `json:"currentContext"`
	// manifests by name.
	// +optional
	Manifests map[string]*Manifest `json:"manifests"`
	// managementConfiguration by name: how BMCs are reached.
	// +optional
	ManagementConfiguration map[string]*ManagementConfiguration `json:"managementConfiguration,omitempty"`
	// encryptionConfigs are accepted for compatibility.
	// +optional
	EncryptionConfigs map[string]*EncryptionConfig `json:"encryptionConfigs,omitempty"`
	// permissions of directories and files airshipctl writes.
	// +optional
	Permissions *Permissions `json:"permissions,omitempty"`
}

// Context ties a name to a manifest and a management configuration.
type Context struct {
	// manifest is the name of an entry of manifests.
	// +optional
	Manifest string `json:"manifest,omitempty"`
	// managementConfiguration is the name of an entry of managementConfiguration.
	// +optional
	ManagementConfiguration string `json:"managementConfiguration,omitempty"`
	// encryptionConfig is accepted for compatibility.
	// +optional
	EncryptionConfig string `json:"encryptionConfig,omitempty"`
	// contextKubeconf is the older upstream kubeconfig context name, accepted for compatibility.
	// +optional
	NameInKubeconf string `json:"contextKubeconf,omitempty"`
}

// Manifest says where a site's documents are.
type Manifest struct {
	// phaseRepositoryName names the repository holding the phases.
	// +required
	PhaseRepositoryName string `json:"phaseRepositoryName"`
	// inventoryRepositoryName names the repository holding the host inventory.
	// +optional
	InventoryRepositoryName string `json:"inventoryRepositoryName,omitempty"`
	// repositories by name. Each is checked out under
	// targetPath/<directory named after its URL>.
	// +optional
	Repositories map[string]*Repository `json:"repositories,omitempty"`
	// targetPath is the local directory the repositories live in.
	// +required
	TargetPath string `json:"targetPath"`
	// metadataPath is the metadata.yaml file, relative to targetPath +
	// phase repository directory.
	// +required
	MetadataPath string `json:"metadataPath"`
}

// Repository is a Git repository of site documents.
type Repository struct {
	// url of the repository; its last path element (without .git) names
	// its directory under targetPath.
	// +required
	URL string `json:"url"`
	// auth for fetching it.
	// +optional
	Auth *RepoAuth `json:"auth,omitempty"`
	// checkout says which revision.
	// +optional
	Checkout *RepoCheckout `json:"checkout,omitempty"`
}

// RepoAuth is how to authenticate to a repository.
type RepoAuth struct {
	// type is ssh-key, ssh-pass or http-basic.
	// +optional
	Type string `json:"type,omitempty"`
	// keyPass decrypts the SSH key. Secret: never printed.
	// +optional
	KeyPassword string `json:"keyPass,omitempty"`
	// sshKey is the path of the SSH private key.
	// +optional
	KeyPath string `json:"sshKey,omitempty"`
	// httpPass is the HTTP basic password. Secret: never printed.
	// +optional
	HTTPPassword string `json:"httpPass,omitempty"`
	// sshPass is the SSH password. Secret: never printed.
	// +optional
	SSHPassword string `json:"sshPass,omitempty"`
	// username for any type.
	// +optional
	Username string `json:"username,omitempty"`
}

// RepoCheckout selects a revision; branch, tag, commitHash and remoteRef are mutually exclusive.
type RepoCheckout struct {
	// commitHash to check out.
	// +optional
	CommitHash string `json:"commitHash,omitempty"`
	// branch to check out.
	// +optional
	Branch string `json:"branch,omitempty"`
	// tag to check out.
	// +optional
	Tag string `json:"tag,omitempty"`
	// remoteRef to check out, e.g. refs/changes/04/691202/5.
	// +optional
	RemoteRef string `json:"remoteRef,omitempty"`
	// force the checkout.
	// +optional
	Force bool `json:"force,omitempty"`
	// localBranch says branch is local.
	// +optional
	LocalBranch bool `json:"localBranch,omitempty"`
}

// Validate reports a checkout naming more than one revision; nil names
// none, the default branch. Both the airship config's validation and
// document pull check it, so it lives with the type.
func (c *RepoCheckout) Validate() error {
	if c == nil {
		return nil
	}
	set := 0
	for _, v := range []string{c.Branch, c.Tag, c.CommitHash, c.RemoteRef} {
		if v != "" {
			set++
		}
	}
	if set > 1 {
		return errors.New("branch, tag, commitHash and remoteRef are mutually exclusive")
	}
	return nil
}

// ManagementConfiguration says how to reach BMCs.
type ManagementConfiguration struct {
	// type of out-of-band management: redfish or redfish-dell.
	// +optional
	Type string `json:"type,omitempty"`
	// insecure skips BMC certificate checks.
	// +optional
	Insecure bool `json:"insecure,omitempty"`
	// useproxy sends BMC requests through the environment's proxy.
	// +optional
	UseProxy bool `json:"useproxy,omitempty"`
	// systemActionRetries is how often a host's state is polled.
	// +optional
	SystemActionRetries int `json:"systemActionRetries,omitempty"`
	// systemRebootDelay is the seconds between power actions.
	// +optional
	SystemRebootDelay int `json:"systemRebootDelay,omitempty"`
}

// EncryptionConfig is accepted for compatibility.
type EncryptionConfig struct {
	// encryptionKeyPath of a key file.
	// +optional
	EncryptionKeyPath string `json:"encryptionKeyPath,omitempty"`
	// decryptionKeyPath of a key file.
	// +optional
	DecryptionKeyPath string `json:"decryptionKeyPath,omitempty"`
	// keySecretName of a Secret holding keys.
	// +optional
	KeySecretName string `json:"keySecretName,omitempty"`
	// keySecretNamespace of that Secret.
	// +optional
	KeySecretNamespace string `json:"keySecretNamespace,omitempty"`
}

// Permissions of what airshipctl writes (decimal file modes, as upstream).
type Permissions struct {
	// DirectoryPermission, e.g. 488 (0750).
	// +optional
	DirectoryPermission uint32 `json:"DirectoryPermission,omitempty"`
	// FilePermission, e.g. 416 (0640).
	// +optional
	FilePermission uint32 `json:"FilePermission,omitempty"`
}
