package dnscheck

import (
	"context"
	"errors"
	"net"
)

// Resolver is the one DNS interface of these checks; *net.Resolver satisfies it.
type Resolver interface {
	LookupTXT(ctx context.Context, name string) ([]string, error)
	LookupCNAME(ctx context.Context, host string) (string, error)
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// notFound reports whether err says the name or the record does not exist (as opposed to a failed lookup).
func notFound(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && de.IsNotFound
}
