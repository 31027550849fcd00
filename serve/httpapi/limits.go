package httpapi

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/mindmount/mindmount/serve/webui"
)

// What one client can hold open at the front, so that one user's token
// cannot take the daemon's descriptors or memory (every MCP GET stream,
// chat stream and request in flight is one open request):
//
//   - DefaultMaxPerUser requests (streams included) of one user at once;
//     past it, 429 for that user only.
//   - DefaultMaxOpen requests in total; past it, 503.
//   - MaxConns connections in total, well below the process's descriptor
//     limit; past it, a new connection is answered 503 and closed at
//     once (connLimit).
const (
	DefaultMaxPerUser = 32
	DefaultMaxOpen    = 512
)

// defaultMaxConns is a quarter of the descriptor limit, at most 1024: the
// rest stays for the workers' sockets, the model and the files.
func defaultMaxConns() int {
	var rl unix.Rlimit
	if unix.Getrlimit(unix.RLIMIT_NOFILE, &rl) != nil || rl.Cur == unix.RLIM_INFINITY {
		return 1024
	}
	return int(min(1024, max(16, rl.Cur/4)))
}

// openRequests counts the requests in flight, per user and in total.
type openRequests struct {
	perUser, total int
	mu             sync.Mutex
	byUser         map[string]int
	all            int
}

// take counts one more request of user, or answers 429 (the user's cap)
// or 503 (the daemon's) and returns false. done ends it. User "" counts
// in the total only (the web page, which names its user to takeUser once
// its session says whose pages it opens).
func (o *openRequests) take(w http.ResponseWriter, user string) (done func(), ok bool) {
	return o.count(w, user, true)
}

// takeUser is take for a request already counted in the total: it
// counts it among user's only.
func (o *openRequests) takeUser(w http.ResponseWriter, user string) (done func(), ok bool) {
	return o.count(w, user, false)
}

func (o *openRequests) count(w http.ResponseWriter, user string, total bool) (done func(), ok bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if total && o.all >= o.total {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusServiceUnavailable, fmt.Sprintf("the server has %d requests and streams open, the most it serves at once; retry shortly", o.all))
		return nil, false
	}
	if user != "" && o.byUser[user] >= o.perUser {
		w.Header().Set("Retry-After", "5")
		writeError(w, http.StatusTooManyRequests, fmt.Sprintf("this user has %d requests and streams open, the most one user may: close some (each MCP session's GET stream and each open web page counts) and retry", o.byUser[user]))
		return nil, false
	}
	if o.byUser == nil {
		o.byUser = map[string]int{}
	}
	o.byUser[user]++
	if total {
		o.all++
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			o.mu.Lock()
			defer o.mu.Unlock()
			if total {
				o.all--
			}
			if o.byUser[user]--; o.byUser[user] <= 0 {
				delete(o.byUser, user)
			}
		})
	}, true
}

// connLimit is a listener that holds at most max connections open: one
// past it is answered 503 and closed at once, so the front's descriptors
// stay bounded whatever clients open.
type connLimit struct {
	net.Listener
	max  int64
	open atomic.Int64
}

// refusal is the whole answer to a connection over the cap.
var refusal = func() []byte {
	body := `{"error":"the server has as many connections open as it serves; retry shortly"}` + "\n"
	return []byte("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 5\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)) + "\r\n\r\n" + body)
}()

func (l *connLimit) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			c.SetWriteDeadline(time.Now().Add(time.Second))
			c.Write(refusal)
			c.Close()
			continue
		}
		return &limitedConn{Conn: c, l: l}, nil
	}
}

type limitedConn struct {
	net.Conn
	l    *connLimit
	once sync.Once
}

func (c *limitedConn) Close() error {
	c.once.Do(func() { c.l.open.Add(-1) })
	return c.Conn.Close()
}

// counted counts the web page's requests in the total of open requests,
// and lets the page count each among its user's (webui.WithLimit) once
// its session says whose pages it opens.
func (s *Server) counted(h http.Handler) http.Handler {
	limit := webui.Limit(s.open.takeUser)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		done, ok := s.open.take(w, "")
		if !ok {
			return
		}
		defer done()
		h.ServeHTTP(w, r.WithContext(webui.WithLimit(r.Context(), limit)))
	})
}
