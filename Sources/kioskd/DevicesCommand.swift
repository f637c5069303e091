import ArgumentParser
import KioskDisplay

struct DevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "devices",
        abstract: "List DRM cards with their connectors, modes (exact refresh and timings), CRTCs and planes.")

    @Option(help: "Directory holding the card nodes.")
    var directory = "/dev/dri"

    @Flag(help: "Also list every connector, CRTC and plane property with its value, as modetest does.")
    var properties = false

    func run() throws {
        print(DeviceReport.describeAll(in: directory, properties: properties), terminator: "")
    }
}
