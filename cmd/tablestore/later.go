package main

func backupCommand() *command { return &command{name: "backup"} }
func statsCommand() *command  { return &command{name: "stats"} }
func serveCommand() *command  { return &command{name: "serve"} }
