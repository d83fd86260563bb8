// The auth service process: serves its ROUTER until SIGTERM/SIGINT.
import AuthService
import Platform

let options = PlatformOptions.parseOrExit()
await ServiceMain.run(AuthService.definition(configuration: ProcessSetup.configuration(options)), options: options)
