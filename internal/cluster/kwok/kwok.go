package kwok

// NodeAnnotation, set to NodeAnnotationValue, marks the Nodes kwok manages
// (the value of kwok's --manage-nodes-with-annotation-selector).
const (
	NodeAnnotation      = "kwok.x-k8s.io/node"
	NodeAnnotationValue = "fake"
)
