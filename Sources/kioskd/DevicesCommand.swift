import ArgumentParser
import KioskDisplay

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List DRM cards with their connectors, modes, CRTCs and planes.")

    @Option(help: "Directory holding the card nodes.")
    var directory = "/dev/dri"

    func run() throws {
        print(DeviceReport.describeAll(in: directory), terminator: "")
    }
}
