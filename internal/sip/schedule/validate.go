package schedule

import "k8s.io/apimachinery/pkg/util/validation"

// validateLabelKey returns why key is not a label key.
func validateLabelKey(key string) []string { return validation.IsQualifiedName(key) }
