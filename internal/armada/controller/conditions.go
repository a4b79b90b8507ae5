package controller

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	armadav1 "github.com/airshipit/airship-go/api/armada/v1alpha1"
)

// outcome is what a reconcile of a group or manifest ends in; the
// conditions follow from it, so step code never sets Ready itself.
type outcome int

const (
	outcomeReady outcome = iota
	outcomeProgressing
	outcomeStalled
	outcomeFailed
)

// setConditions writes Ready, Reconciling and Stalled for an outcome, kstatus
// style: Reconciling only while progressing or retrying, Stalled only when a
// spec change is needed.
func setConditions(conds *[]metav1.Condition, gen int64, o outcome, reason, msg string) {
	set := func(t string, s metav1.ConditionStatus) {
		apimeta.SetStatusCondition(conds, metav1.Condition{Type: t, Status: s, Reason: reason, Message: truncate(msg), ObservedGeneration: gen})
	}
	switch o {
	case outcomeReady:
		set(armadav1.ReadyCondition, metav1.ConditionTrue)
		apimeta.RemoveStatusCondition(conds, armadav1.ReconcilingCondition)
		apimeta.RemoveStatusCondition(conds, armadav1.StalledCondition)
	case outcomeProgressing, outcomeFailed:
		set(armadav1.ReadyCondition, metav1.ConditionFalse)
		set(armadav1.ReconcilingCondition, metav1.ConditionTrue)
		apimeta.RemoveStatusCondition(conds, armadav1.StalledCondition)
	case outcomeStalled:
		set(armadav1.ReadyCondition, metav1.ConditionFalse)
		set(armadav1.StalledCondition, metav1.ConditionTrue)
		apimeta.RemoveStatusCondition(conds, armadav1.ReconcilingCondition)
	}
}
