package hostops

import (
	"fmt"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/airshipit/airship-go/api/airshipit/v1alpha1"
	"github.com/airshipit/airship-go/internal/httplimit"
	"github.com/airshipit/airship-go/internal/metal3/provisioner"
	"github.com/airshipit/airship-go/internal/metal3/provisioner/redfish"
)

// NewClient returns a client for rc that reads BareMetalHosts and Secrets.
func NewClient(rc *rest.Config) (client.Client, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	if err := metal3v1alpha1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	c, err := client.New(rc, client.Options{Scheme: scheme})
	if err != nil {
		return nil, fmt.Errorf("client for %s: %w", rc.Host, err)
	}
	return c, nil
}

// RedfishOptions are the Redfish provisioner's options under an airship
// config's managementConfiguration (nil: the defaults): BMC requests go
// through the environment's proxy (HTTP_PROXY, HTTPS_PROXY, NO_PROXY, as
// they are when this is called) only with useproxy, and skip the
// certificate check of every BMC only with insecure. The request timeout
// and the answer cap are the provisioner's.
func RedfishOptions(mc *v1.ManagementConfiguration) redfish.Options {
	var o redfish.Options
	if mc == nil {
		return o
	}
	if mc.UseProxy {
		o.Proxy = httplimit.ProxyFromEnvironment()
	}
	o.InsecureSkipVerify = mc.Insecure
	return o
}

// NewFactory reaches BMCs over Redfish as mc says (see RedfishOptions).
func NewFactory(mc *v1.ManagementConfiguration) provisioner.BMCFactory {
	return redfish.New(RedfishOptions(mc))
}
