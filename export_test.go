package main

// Addr returns the address the server listens on.
func (m *Main) Addr() string { return m.listener.Addr().String() }
