// ModuleEepromReader implementations. The kernel one asks ethtool netlink for each page the
// memory map needs (ETHTOOL_MSG_MODULE_EEPROM_GET, kernel 5.13+: CMIS banks and pages, SFF-8472
// A2h at I2C address 0x51), and falls back to the ETHTOOL_GMODULEINFO / GMODULEEEPROM ioctls
// (SFF-8472 A0h+A2h, SFF-8636 pages 00h-03h in one flat image) where the genetlink family or
// the driver's paged read is missing. Both need CAP_NET_ADMIN. Each page is an I2C transfer on
// the module's management interface, milliseconds each: the collector is slow-tier.
//
// Why by hand: libnl-genl resolves the family and builds the message, but has no ethtool
// attribute helpers; the ioctl has no library at all.
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "netlink_util.h"
#include "rdma_exporter/file_util.h"
#include "rdma_exporter/kernel_readers.h"
#include "rdma_exporter/unique_fd.h"

namespace rdma_exporter {
namespace {

constexpr uint8_t kI2cA0 = 0x50;  // module memory (SFF-8636, CMIS, SFF-8472 A0h)
constexpr uint8_t kI2cA2 = 0x51;  // SFF-8472 diagnostics

bool ValidNetdevName(const std::string& netdev) {
  return !netdev.empty() && netdev.size() < IFNAMSIZ && netdev.find('/') == std::string::npos;
}

// The upper pages each memory map needs, after the lower page: (bank, page).
std::vector<std::pair<int, int>> UpperPages(const EepromPage& lower) {
  switch (lower[0]) {
    case 0x0C:
    case 0x0D:
    case 0x11:  // SFF-8636: identity, then thresholds unless flat memory
      return (lower[2] & 0x04) ? std::vector<std::pair<int, int>>{{0, 0x00}}
                               : std::vector<std::pair<int, int>>{{0, 0x00}, {0, 0x03}};
    case 0x18:
    case 0x19:
    case 0x1E:  // CMIS: identity; advertisements, thresholds and lane monitors unless flat
      return (lower[2] & 0x80)
                 ? std::vector<std::pair<int, int>>{{0, 0x00}}
                 : std::vector<std::pair<int, int>>{{0, 0x00}, {0, 0x01}, {0, 0x02}, {0, 0x11}};
    default:
      return {};
  }
}

// ------------------------------------------------------------------------ ethtool netlink ----

class NetlinkModuleReader {
 public:
  // 0 with *eeprom filled; EOPNOTSUPP when the kernel has no ethtool genetlink family or the
  // driver no paged read (then the ioctls are tried), else the kernel's errno.
  [[nodiscard]] int Read(const std::string& netdev, ModuleEeprom* eeprom) {
    if (family_ < 0) return EOPNOTSUPP;
    if (family_ == 0) {
      int err = ResolveFamily();
      if (err != 0) {
        family_ = -1;  // no ethtool netlink in this kernel: never asked again
        return EOPNOTSUPP;
      }
    }
    int err = ReadPage(netdev, kI2cA0, 0, 0, 0, eeprom->lower.data());
    if (err != 0) return err;
    if (eeprom->lower[0] == 0x03) {  // SFF-8472: A2h's first 128 bytes hold everything we read
      std::array<uint8_t, 256> a2{};
      if (ReadPage(netdev, kI2cA2, 0, 0, 0, a2.data()) == 0) eeprom->a2 = a2;
      return 0;
    }
    for (const auto& [bank, page] : UpperPages(eeprom->lower)) {
      EepromPage data{};
      // A page the module or driver refuses costs only what is on it.
      if (ReadPage(netdev, kI2cA0, bank, page, 128, data.data()) == 0)
        eeprom->upper[{bank, page}] = data;
    }
    return 0;
  }

 private:
  // CTRL_CMD_GETFAMILY "ethtool" -> the family's id.
  [[nodiscard]] int ResolveFamily() {
    NlMsgPtr msg = NewNetlinkRequest(GENL_ID_CTRL, 0);
    if (msg == nullptr) return ENOMEM;
    genlmsghdr hdr{CTRL_CMD_GETFAMILY, 1, 0};
    if (nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO) < 0) return ENOMEM;
    if (nla_put_string(msg.get(), CTRL_ATTR_FAMILY_NAME, ETHTOOL_GENL_NAME) < 0) return ENOMEM;
    int id = 0;
    int err = channel_.Transact(msg.get(), GENL_ID_CTRL, [&](const nlmsghdr* reply) {
      nlattr* attrs[CTRL_ATTR_MAX + 1] = {};
      if (nlmsg_parse(const_cast<nlmsghdr*>(reply), GENL_HDRLEN, attrs, CTRL_ATTR_MAX, nullptr) <
              0 ||
          attrs[CTRL_ATTR_FAMILY_ID] == nullptr || nla_len(attrs[CTRL_ATTR_FAMILY_ID]) < 2) {
        return EBADMSG;
      }
      id = nla_get_u16(attrs[CTRL_ATTR_FAMILY_ID]);
      return 0;
    });
    if (err != 0) return err;
    family_ = id;
    return 0;
  }

  // 128 bytes at offset (0: the lower page; 128: upper page `page` of `bank`) into out.
  [[nodiscard]] int ReadPage(const std::string& netdev, uint8_t i2c, int bank, int page,
                             uint32_t offset, uint8_t* out) {
    NlMsgPtr msg = NewNetlinkRequest(static_cast<uint16_t>(family_), 0);
    if (msg == nullptr) return ENOMEM;
    genlmsghdr hdr{ETHTOOL_MSG_MODULE_EEPROM_GET, ETHTOOL_GENL_VERSION, 0};
    if (nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO) < 0) return ENOMEM;
    nlattr* header = nla_nest_start(msg.get(), ETHTOOL_A_MODULE_EEPROM_HEADER);
    if (header == nullptr ||
        nla_put_string(msg.get(), ETHTOOL_A_HEADER_DEV_NAME, netdev.c_str()) < 0) {
      return ENOMEM;
    }
    nla_nest_end(msg.get(), header);
    if (nla_put_u32(msg.get(), ETHTOOL_A_MODULE_EEPROM_OFFSET, offset) < 0 ||
        nla_put_u32(msg.get(), ETHTOOL_A_MODULE_EEPROM_LENGTH, 128) < 0 ||
        nla_put_u8(msg.get(), ETHTOOL_A_MODULE_EEPROM_PAGE, static_cast<uint8_t>(page)) < 0 ||
        nla_put_u8(msg.get(), ETHTOOL_A_MODULE_EEPROM_BANK, static_cast<uint8_t>(bank)) < 0 ||
        nla_put_u8(msg.get(), ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS, i2c) < 0) {
      return ENOMEM;
    }
    return channel_.Transact(msg.get(), static_cast<uint16_t>(family_), [&](const nlmsghdr* reply) {
      nlattr* attrs[ETHTOOL_A_MODULE_EEPROM_MAX + 1] = {};
      if (nlmsg_parse(const_cast<nlmsghdr*>(reply), GENL_HDRLEN, attrs, ETHTOOL_A_MODULE_EEPROM_MAX,
                      nullptr) < 0) {
        return EBADMSG;
      }
      const nlattr* data = attrs[ETHTOOL_A_MODULE_EEPROM_DATA];
      if (data == nullptr || nla_len(data) != 128) return EBADMSG;
      std::memcpy(out, nla_data(data), 128);
      return 0;
    });
  }

  NetlinkChannel channel_{NETLINK_GENERIC};
  int family_ = 0;  // 0: not resolved yet; -1: the kernel has none
};

// ------------------------------------------------------------------------------- ioctls ----

class IoctlModuleReader {
 public:
  [[nodiscard]] int Read(const std::string& netdev, ModuleEeprom* eeprom) {
    if (!socket_.valid()) {
      socket_.reset(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
      if (!socket_.valid()) return errno;
    }
    ethtool_modinfo info{};
    info.cmd = ETHTOOL_GMODULEINFO;
    if (int err = Call(netdev, &info); err != 0) return err;
    // The image layouts of ETH_MODULE_SFF_*: A0h (+ A2h at 256), or the SFF-8636 lower page,
    // then upper pages 00h, 01h, 02h, 03h at 128, 256, 384, 512.
    const uint32_t len = std::min<uint32_t>(info.eeprom_len, 640);
    if (len < 128) return EBADMSG;
    std::vector<uint8_t> buffer(sizeof(ethtool_eeprom) + len);
    auto* request = reinterpret_cast<ethtool_eeprom*>(buffer.data());
    request->cmd = ETHTOOL_GMODULEEEPROM;
    request->offset = 0;
    request->len = len;
    if (int err = Call(netdev, request); err != 0) return err;
    const uint8_t* image = buffer.data() + sizeof(ethtool_eeprom);
    std::memcpy(eeprom->lower.data(), image, 128);
    if (info.type == ETH_MODULE_SFF_8472 && len >= 512) {
      std::array<uint8_t, 256> a2{};
      std::memcpy(a2.data(), image + 256, 256);
      eeprom->a2 = a2;
    } else if (info.type == ETH_MODULE_SFF_8436 || info.type == ETH_MODULE_SFF_8636) {
      for (int page = 0; page <= 3; ++page) {
        const uint32_t at = 128 + 128 * static_cast<uint32_t>(page);
        if (at + 128 > len) break;
        std::memcpy(eeprom->upper[{0, page}].data(), image + at, 128);
      }
    }
    return 0;
  }

 private:
  [[nodiscard]] int Call(const std::string& netdev, void* data) {
    ifreq ifr{};
    std::memcpy(ifr.ifr_name, netdev.data(), netdev.size());
    ifr.ifr_data = static_cast<char*>(data);
    return ioctl(socket_.get(), SIOCETHTOOL, &ifr) == 0 ? 0 : errno;
  }
  UniqueFd socket_;
};

class KernelModuleEepromReader : public ModuleEepromReader {
 public:
  [[nodiscard]] int Read(const std::string& netdev, ModuleEeprom* out) override {
    *out = ModuleEeprom{};
    if (!ValidNetdevName(netdev)) return ENODEV;
    int err = netlink_.Read(netdev, out);
    if (err != EOPNOTSUPP) return err;
    *out = ModuleEeprom{};
    return ioctl_.Read(netdev, out);
  }

 private:
  NetlinkModuleReader netlink_;
  IoctlModuleReader ioctl_;
};

// ------------------------------------------------------------------------------ fixtures ----

// <dir>/<netdev>/lower (128 bytes), a2 (up to 256), page-<bank>-<page in hex> (128 each), as
// the fabric simulator writes them. No directory: no module (ENODEV, as a port without a cage
// answers EOPNOTSUPP).
class FixtureModuleEepromReader : public ModuleEepromReader {
 public:
  explicit FixtureModuleEepromReader(std::string dir) : dir_(std::move(dir)) {}
  [[nodiscard]] int Read(const std::string& netdev, ModuleEeprom* out) override {
    *out = ModuleEeprom{};
    if (!ValidNetdevName(netdev)) return ENODEV;
    const std::string base = dir_ + "/" + netdev;
    std::string text;
    if (int err = ReadWholeFile(base + "/lower", &text); err != 0) {
      return err == ENOENT ? EOPNOTSUPP : err;
    }
    if (text.size() != 128) return EBADMSG;
    std::memcpy(out->lower.data(), text.data(), 128);
    if (ReadWholeFile(base + "/a2", &text) == 0 && !text.empty() && text.size() <= 256) {
      std::array<uint8_t, 256> a2{};
      std::memcpy(a2.data(), text.data(), text.size());
      out->a2 = a2;
    }
    for (const auto& [bank, page] : UpperPages(out->lower)) {
      char name[32];
      std::snprintf(name, sizeof(name), "/page-%d-%02x", bank, page);
      if (ReadWholeFile(base + name, &text) == 0 && text.size() == 128)
        std::memcpy(out->upper[{bank, page}].data(), text.data(), 128);
    }
    return 0;
  }

 private:
  std::string dir_;
};

}  // namespace

std::unique_ptr<ModuleEepromReader> MakeModuleEepromKernelReader() {
  return std::make_unique<KernelModuleEepromReader>();
}

std::unique_ptr<ModuleEepromReader> MakeModuleEepromFixtureReader(std::string dir) {
  return std::make_unique<FixtureModuleEepromReader>(std::move(dir));
}

}  // namespace rdma_exporter
