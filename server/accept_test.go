package server_test

import (
	"net"
	"testing"
	"time"

	"github.com/semfs/semfs/server"
)

func TestAcceptHandsConnectionsAndEndsOnClose(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan net.Conn, 4)
	done := make(chan error, 1)
	go func() { done <- server.Accept(ln, nil, func(c net.Conn) { got <- c }) }()
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		select {
		case s := <-got:
			s.Close()
		case <-time.After(5 * time.Second):
			t.Fatal("connection not handed over")
		}
	}
	ln.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Accept after close: %v, want nil", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Accept did not return after the listener closed")
	}
}
