package sim

// InjectClose ends from's connection with to at the current time, as if
// from had called Env.Close in a step of its own: the end is traced and to
// learns it by the FIN (ConnObserver). A real-time driver calls it when a
// real server closed a connection that the gateway process stands for
// (ZooKeeper closes the connection of a session it expired), from the one
// goroutine that runs the kernel.
func (k *Kernel) InjectClose(from, to ProcID) { k.close(k.procs[from], to, 0) }
