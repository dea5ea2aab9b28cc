package store

// Hooks are called after a change is committed, never inside a transaction.
// They let the program publish live events without the store knowing how.
type Hooks struct {
	// UserChanged is called with the live record after a user changes.
	UserChanged func(u *User)
	// SettingsChanged is called after options change.
	SettingsChanged func(s *Settings)
	// Charged is called after each committed batch of charges with the new
	// consume logs and the live balances of the users charged.
	Charged func(b ChargeBatch)
	// WritesStopped is called once when the file reported a write failure
	// after the change had become visible (see update): from then on the
	// store refuses writes, and the program should stop so that a restart
	// opens the file afresh.
	WritesStopped func(err error)
}

type hooks = Hooks

// SetHooks installs the hooks; call it before serving.
func (s *Store) SetHooks(h Hooks) { s.hooks = h }

func (s *Store) userChanged(id uint64) {
	if s.hooks.UserChanged == nil {
		return
	}
	if u, err := s.User(id); err == nil {
		s.hooks.UserChanged(u)
	}
}
