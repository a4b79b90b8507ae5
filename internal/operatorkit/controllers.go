package operatorkit

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Controller is a part of an operator that starts on its own once the API
// server serves its CRDs, on a manager already running: a site without
// Cluster API's CRDs still gets its BareMetalHosts reconciled.
type Controller struct {
	// Name names the controller in the log and in /readyz.
	Name string
	// Kinds are the CRDs the controller needs served.
	Kinds []GroupKinds
	// Reconcilers returns the controller's reconcilers, registered in
	// order once Kinds are served.
	Reconcilers func(mgr ctrl.Manager, log logr.Logger) []Reconciler
}

// setUp registers c's reconcilers on mgr.
func (c Controller) setUp(ctx context.Context, mgr ctrl.Manager, log logr.Logger) error {
	if c.Reconcilers == nil {
		return nil
	}
	for _, r := range c.Reconcilers(mgr, log) {
		if err := r.SetupWithManager(ctx, mgr); err != nil {
			return fmt.Errorf("controller %s: %w", c.Name, err)
		}
	}
	return nil
}

// missingKinds are the kinds of need that served (kinds by group version,
// as discovery lists them) lacks, each as "group/version Kind", in need's
// order.
func missingKinds(need []GroupKinds, served map[string][]string) []string {
	var missing []string
	for _, gk := range need {
		for _, k := range gk.Kinds {
			if !slices.Contains(served[gk.GroupVersion], k) {
				missing = append(missing, gk.GroupVersion+" "+k)
			}
		}
	}
	return missing
}

// servedKinds lists the kinds the API server serves in each group version
// of need; a group version it does not serve lists none, as does one
// discovery fails on (logged).
func servedKinds(dc discovery.ServerResourcesInterface, need []GroupKinds, log logr.Logger) map[string][]string {
	served := map[string][]string{}
	for _, gk := range need {
		if _, done := served[gk.GroupVersion]; done {
			continue
		}
		served[gk.GroupVersion] = nil
		list, err := dc.ServerResourcesForGroupVersion(gk.GroupVersion)
		if err != nil {
			if !apierrors.IsNotFound(err) {
				log.Error(err, "looking for the operator's CRDs", "groupVersion", gk.GroupVersion)
			}
			continue
		}
		served[gk.GroupVersion] = kindsOf(list.APIResources)
	}
	return served
}

func kindsOf(rs []metav1.APIResource) []string {
	kinds := make([]string, 0, len(rs))
	for _, r := range rs {
		kinds = append(kinds, r.Kind)
	}
	return kinds
}

// controllerStarter registers each of an operator's Controllers on its
// running manager once the API server serves the controller's kinds, and
// tells /readyz whether any runs. It runs on every replica, leader or not
// (NeedLeaderElection): registering is what a standby does too; its
// controllers then run once it is elected.
type controllerStarter struct {
	mgr         ctrl.Manager
	dc          discovery.ServerResourcesInterface
	log         logr.Logger
	controllers []Controller

	mu      sync.Mutex
	started int
	waiting map[string][]string // controller name → its missing kinds
}

func newControllerStarter(dc discovery.ServerResourcesInterface, controllers []Controller, log logr.Logger) *controllerStarter {
	s := &controllerStarter{dc: dc, log: log, controllers: controllers, waiting: map[string][]string{}}
	for _, c := range controllers {
		s.waiting[c.Name] = missingKinds(c.Kinds, nil)
	}
	return s
}

// NeedLeaderElection is false: a standby registers its controllers too.
func (s *controllerStarter) NeedLeaderElection() bool { return false }

// Start registers the controllers whose kinds are served, looks again
// every APIPollInterval for the others, and returns once every controller
// is registered (nil), ctx ends (nil) or one fails to register.
func (s *controllerStarter) Start(ctx context.Context) error {
	pending := s.controllers
	logged := map[string]bool{}
	for {
		var need []GroupKinds
		for _, c := range pending {
			need = append(need, c.Kinds...)
		}
		served := servedKinds(s.dc, need, s.log)
		var still []Controller
		for _, c := range pending {
			if missing := missingKinds(c.Kinds, served); len(missing) > 0 {
				s.setWaiting(c.Name, missing)
				if !logged[c.Name] {
					s.log.Info("controller "+c.Name+" waits for CRDs", "missing", missing)
					logged[c.Name] = true
				}
				still = append(still, c)
				continue
			}
			if err := c.setUp(ctx, s.mgr, s.log); err != nil {
				return err
			}
			s.setStarted(c.Name)
			s.log.Info("controller " + c.Name + " started")
		}
		if pending = still; len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(APIPollInterval):
		}
	}
}

func (s *controllerStarter) setWaiting(name string, missing []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting[name] = missing
}

func (s *controllerStarter) setStarted(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.waiting, name)
	s.started++
}

// ready is nil once a controller is registered; until then it names what
// each controller waits for.
func (s *controllerStarter) ready() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started > 0 {
		return nil
	}
	var parts []string
	for _, c := range s.controllers {
		parts = append(parts, c.Name+" waits for "+strings.Join(s.waiting[c.Name], ", "))
	}
	return fmt.Errorf("waiting for the operator's CRDs: %s", strings.Join(parts, "; "))
}

// gated answers 503 with gate's error while it fails, else as h does.
func gated(gate func() error, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := gate(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		h.ServeHTTP(w, r)
	})
}
