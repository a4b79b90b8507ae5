package dashboard

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"
)

// coalesce is how long the hub gathers changes before it tells the
// browsers: a burst of watch events becomes one "change" event.
const coalesce = 200 * time.Millisecond

// hub fans changes out to the event streams of every browser.
type hub struct {
	mu sync.Mutex
	// subs are the subscribers, each with whether it missed a message.
	subs    map[chan message]bool
	pending map[string]bool
	timer   *time.Timer
}

type message struct {
	event string
	data  []byte
}

func newHub() *hub {
	return &hub{subs: map[chan message]bool{}, pending: map[string]bool{}}
}

// notify marks topics changed; subscribers hear of them within coalesce.
func (h *hub) notify(topics ...string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, t := range topics {
		h.pending[t] = true
	}
	if h.timer == nil {
		h.timer = time.AfterFunc(coalesce, h.flush)
	}
}

func (h *hub) flush() {
	h.mu.Lock()
	topics := make([]string, 0, len(h.pending))
	for t := range h.pending {
		topics = append(topics, t)
	}
	clear(h.pending)
	h.timer = nil
	h.mu.Unlock()
	slices.Sort(topics)
	b, _ := json.Marshal(map[string][]string{"topics": topics})
	h.send(message{event: "change", data: b})
}

// runEvent sends a run's progress line at once.
func (h *hub) runEvent(id string, ev RunEvent) {
	b, _ := json.Marshal(struct {
		RunID string   `json:"runID"`
		Event RunEvent `json:"event"`
	}{id, ev})
	h.send(message{event: "runevent", data: b})
}

// everything is the change that names every topic: what a subscriber
// that missed messages gets instead of the next one, so its page reads
// everything again.
var everything = func() message {
	b, _ := json.Marshal(map[string][]string{"topics": {TopicAudit, TopicCertificates, TopicCharts, TopicClusters, TopicHosts, TopicOverview, TopicPhases, TopicPlans, TopicRuns}})
	return message{event: "change", data: b}
}()

// send gives m to every subscriber; one whose buffer is full (a browser
// that stopped reading) misses it rather than holding the others up, and
// gets a change of every topic in place of the next message it has room
// for.
func (h *hub) send(m message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for c, missed := range h.subs {
		out := m
		if missed {
			out = everything
		}
		select {
		case c <- out:
			h.subs[c] = false
		default:
			h.subs[c] = true
		}
	}
}

func (h *hub) subscribe() chan message {
	c := make(chan message, 64)
	h.mu.Lock()
	h.subs[c] = false
	h.mu.Unlock()
	return c
}

func (h *hub) unsubscribe(c chan message) {
	h.mu.Lock()
	delete(h.subs, c)
	h.mu.Unlock()
}

// events is GET /api/events: a server-sent event stream of "change" and
// "runevent" events, with a comment every 25 s to keep proxies from
// closing it, until the browser leaves or the dashboard stops. The
// server's write timeout does not apply to it.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	c := s.hub.subscribe()
	defer s.hub.unsubscribe(c)
	fmt.Fprint(w, "retry: 2000\n: connected\n\n")
	if err := rc.Flush(); err != nil {
		return
	}
	keep := time.NewTicker(25 * time.Second)
	defer keep.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			// The dashboard stops: end the stream, so a graceful shutdown
			// does not wait for browsers that keep it open.
			return
		case <-keep.C:
			fmt.Fprint(w, ": keep-alive\n\n")
		case m := <-c:
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", m.event, m.data)
		}
		_ = rc.SetWriteDeadline(time.Now().Add(30 * time.Second))
		if err := rc.Flush(); err != nil {
			return
		}
		_ = rc.SetWriteDeadline(time.Time{})
	}
}
