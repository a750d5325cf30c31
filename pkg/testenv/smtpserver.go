package testenv

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mail is a message an SMTPServer received.
type Mail struct {
	From string
	To   []string
	Data string // the message as sent: headers, a blank line, the body
}

// SMTPServer is a local SMTP server for tests: it accepts every message
// (no STARTTLS, no authentication) and keeps it.
type SMTPServer struct {
	l    net.Listener
	mu   sync.Mutex
	mail []Mail
}

// NewSMTPServer starts a server on a free loopback port until the test ends.
func NewSMTPServer(tb testing.TB) *SMTPServer {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &SMTPServer{l: l}
	go s.serve()
	tb.Cleanup(func() { _ = l.Close() })
	return s
}

// URL is the server's SMTP_URL.
func (s *SMTPServer) URL() string { return "smtp://" + s.l.Addr().String() }

// Mail returns the messages received so far.
func (s *SMTPServer) Mail() []Mail {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Mail(nil), s.mail...)
}

func (s *SMTPServer) serve() {
	for {
		c, err := s.l.Accept()
		if err != nil {
			return
		}
		go s.session(c)
	}
}

// session speaks the little of RFC 5321 a client sending one message needs.
func (s *SMTPServer) session(c net.Conn) {
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	say := func(line string) { _, _ = w.WriteString(line + "\r\n"); _ = w.Flush() }
	say("220 testenv ESMTP")
	var m Mail
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.ToUpper(strings.TrimSpace(line))
		switch {
		case strings.HasPrefix(cmd, "EHLO"):
			say("250-testenv")
			say("250-8BITMIME")
			say("250 SMTPUTF8")
		case strings.HasPrefix(cmd, "HELO"):
			say("250 testenv")
		case strings.HasPrefix(cmd, "MAIL FROM:"):
			m = Mail{From: addr(line)}
			say("250 OK")
		case strings.HasPrefix(cmd, "RCPT TO:"):
			m.To = append(m.To, addr(line))
			say("250 OK")
		case cmd == "DATA":
			say("354 go ahead")
			var b strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" || l == ".\n" {
					break
				}
				b.WriteString(strings.TrimPrefix(l, "."))
			}
			m.Data = b.String()
			s.mu.Lock()
			s.mail = append(s.mail, m)
			s.mu.Unlock()
			say("250 OK queued")
		case cmd == "QUIT":
			say("221 bye")
			return
		default: // RSET, NOOP
			say("250 OK")
		}
	}
}

// addr is the address between the angle brackets of a MAIL or RCPT line.
func addr(line string) string {
	if i, j := strings.IndexByte(line, '<'), strings.LastIndexByte(line, '>'); i >= 0 && j > i {
		return line[i+1 : j]
	}
	return strings.TrimSpace(line[strings.IndexByte(line, ':')+1:])
}
