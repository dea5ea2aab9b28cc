package api

// TurnstileHeldBytes is how many bytes of Turnstile tokens the server keeps
// to refuse their reuse.
func TurnstileHeldBytes(s *Server) int {
	s.turnstile.mu.Lock()
	defer s.turnstile.mu.Unlock()
	n := 0
	for t := range s.turnstile.used {
		n += len(t)
	}
	return n
}
