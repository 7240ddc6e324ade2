package boltstore

// PagesWritten is how many bytes of pages the store's write transactions
// have allocated, which is what they write to the file, freelist and meta
// page aside.
func PagesWritten(s *Store) int64 {
	st := s.db.Stats()
	return st.TxStats.GetPageAlloc()
}

// ReadTransactions is how many read transactions the store has begun.
func ReadTransactions(s *Store) int { return s.db.Stats().TxN }
