import Foundation
import KioskCore
import KioskPlays
import Logging

/// Opens proof of play's store at start. A store SQLite cannot open or finds inconsistent is moved aside (kept for
/// whoever audits it, as `plays.db.broken-SECONDS`) and a new one made: a kiosk never stops showing for its records,
/// and never records into a damaged file. Main thread, before the loop runs.
enum PlayRecording {
    static func start(path: String?, outputs: [DrivenOutput], loop: MainLoop, logger: Logger) -> PlayRecorder? {
        guard let path else { return nil }
        let store: PlayStore
        do {
            store = try PlayStore(path: path)
        } catch {
            // A file that is there but unusable is kept aside; with none (a folder that does not exist, no right to
            // create it) there is nothing to keep and nothing recorded.
            guard FileManager.default.fileExists(atPath: path) else {
                logger.error("\(error); proof of play is not recorded")
                return nil
            }
            let aside = "\(path).broken-\(Int(Date().timeIntervalSince1970))"
            logger.error("\(error); moved to \(aside), recording into a new store")
            for suffix in ["", "-wal", "-shm"] { try? FileManager.default.moveItem(atPath: path + suffix, toPath: aside + suffix) }
            do { store = try PlayStore(path: path) } catch {
                logger.error("\(error); proof of play is not recorded")
                return nil
            }
        }
        do {
            let recorder = try PlayRecorder(store: store, outputs: outputs, loop: loop, logger: logger)
            logger.info("proof of play: recording into \(path)")
            return recorder
        } catch {
            logger.error("proof of play \(path): \(error); not recorded")
            return nil
        }
    }
}
