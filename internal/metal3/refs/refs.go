package refs

import (
	"errors"
	"fmt"
)

// ErrOtherNamespace is wrapped by every error of Check.
var ErrOtherNamespace = errors.New("references across namespaces are refused")

// Ref is one reference field of an object: its path (spec.userData) and
// the namespace it gives, empty when it gives none.
type Ref struct {
	Field     string
	Namespace string
}

// Check refuses every ref whose namespace is neither empty nor ns, the
// namespace of the object of kind that holds them. The error names each
// such field:
//
//	spec.userData.namespace: must be the BareMetalHost's namespace "tenant", not "kube-system": references across namespaces are refused
func Check(kind, ns string, refs ...Ref) error {
	var errs []error
	for _, r := range refs {
		if r.Namespace == "" || r.Namespace == ns {
			continue
		}
		errs = append(errs, fmt.Errorf("%s.namespace: must be the %s's namespace %q, not %q: %w", r.Field, kind, ns, r.Namespace, ErrOtherNamespace))
	}
	return errors.Join(errs...)
}
