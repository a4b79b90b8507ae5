package hostops

import (
	"context"
	"fmt"
	"sort"
	"strings"

	metal3v1alpha1 "github.com/metal3-io/baremetal-operator/apis/metal3.io/v1alpha1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/airshipit/airship-go/internal/bmc"
)

// Selector picks BareMetalHosts: every field set must match, and an empty
// Namespace means every namespace.
type Selector struct {
	// LabelSelector over the hosts' labels, as kubectl -l takes it.
	LabelSelector string `json:"labelSelector,omitempty"`
	// Name of the host.
	Name string `json:"name,omitempty"`
	// Namespace of the hosts.
	Namespace string `json:"namespace,omitempty"`
}

// String describes the selector for messages.
func (s Selector) String() string {
	var parts []string
	if s.Name != "" {
		parts = append(parts, fmt.Sprintf("name %q", s.Name))
	}
	if s.LabelSelector != "" {
		parts = append(parts, fmt.Sprintf("labels %q", s.LabelSelector))
	}
	if len(parts) == 0 {
		parts = append(parts, "any name and labels")
	}
	if s.Namespace != "" {
		parts = append(parts, fmt.Sprintf("in namespace %q", s.Namespace))
	} else {
		parts = append(parts, "in all namespaces")
	}
	return strings.Join(parts, ", ")
}

// Select returns the hosts the selector picks, sorted by namespace and
// name. No host picked is an error naming the selector.
func Select(ctx context.Context, c client.Reader, sel Selector) ([]metal3v1alpha1.BareMetalHost, error) {
	ls := labels.Everything()
	if sel.LabelSelector != "" {
		var err error
		if ls, err = labels.Parse(sel.LabelSelector); err != nil {
			return nil, fmt.Errorf("label selector %q: %w", sel.LabelSelector, err)
		}
	}
	var hosts []metal3v1alpha1.BareMetalHost
	if sel.Name != "" && sel.Namespace != "" {
		h := metal3v1alpha1.BareMetalHost{}
		err := c.Get(ctx, client.ObjectKey{Namespace: sel.Namespace, Name: sel.Name}, &h)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading BareMetalHost %s/%s: %w", sel.Namespace, sel.Name, err)
		case ls.Matches(labels.Set(h.Labels)):
			hosts = append(hosts, h)
		}
	} else {
		list := metal3v1alpha1.BareMetalHostList{}
		opts := []client.ListOption{client.MatchingLabelsSelector{Selector: ls}}
		if sel.Namespace != "" {
			opts = append(opts, client.InNamespace(sel.Namespace))
		}
		if err := c.List(ctx, &list, opts...); err != nil {
			return nil, fmt.Errorf("listing BareMetalHosts (%s): %w", sel, err)
		}
		for _, h := range list.Items {
			if sel.Name == "" || h.Name == sel.Name {
				hosts = append(hosts, h)
			}
		}
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("no BareMetalHost matches %s", sel)
	}
	sort.Slice(hosts, func(i, j int) bool {
		if hosts[i].Namespace != hosts[j].Namespace {
			return hosts[i].Namespace < hosts[j].Namespace
		}
		return hosts[i].Name < hosts[j].Name
	})
	return hosts, nil
}

// SafeAddress returns a BMC address fit to print: user information (which
// bmc.Parse refuses, but a manifest may still hold), a query and a
// fragment are replaced by "***", with or without a scheme.
func SafeAddress(address string) string { return bmc.Redact(address) }
