package localrunner_test

import (
	"os"
	"testing"

	"github.com/cardflow/cardflow/internal/testenv"
)

// TestMain names the tests that found something they need missing.
func TestMain(m *testing.M) { os.Exit(testenv.Run(m)) }
