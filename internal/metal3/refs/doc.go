// Package refs holds the one rule of the Metal3 part for references
// between objects: a reference resolves in the namespace of the object that
// holds it. A reference may leave its namespace empty (the holder's is
// meant) or name the holder's own; any other namespace is refused with an
// error naming the field, before anything is read. The same rule is
// enforced at admission by the ValidatingAdmissionPolicies of
// config/metal3/policy; the controllers check again for a cluster where the
// policies are missing.
package refs
