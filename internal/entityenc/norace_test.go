//go:build !race

package entityenc

const raceOn = false
