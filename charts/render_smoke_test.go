package charts

import (
	"context"
	"testing"
)

func TestSmokeRender(t *testing.T) {
	m, n, err := Render(context.Background(), RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(m)
	t.Log(n)
}
