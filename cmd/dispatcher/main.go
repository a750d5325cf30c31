// Command dispatcher consumes domain events for delivery to merchants.
package main

import "github.com/convida/convida/pkg/program"

func main() { program.Main("dispatcher", program.WithOps("dispatcher", program.RunDispatcher)...) }
