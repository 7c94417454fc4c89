package server

import (
	"net"
	"syscall"
)

// smallReceiveBuffer is a net.Dialer Control that shrinks the socket's
// receive buffer, so a client that does not read makes the server's
// writes wait.
func smallReceiveBuffer(network, address string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
	})
	if err != nil {
		return err
	}
	return serr
}

// smallSendBuffers wraps a listener so that each accepted TCP connection
// has a small send buffer, and a response the client does not read
// blocks the server's writes.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetWriteBuffer(4096)
	}
	return c, err
}
