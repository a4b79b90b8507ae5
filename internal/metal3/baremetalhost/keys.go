package baremetalhost

import "k8s.io/apimachinery/pkg/types"

func clientKey(namespace, name string) types.NamespacedName {
	return types.NamespacedName{Namespace: namespace, Name: name}
}
