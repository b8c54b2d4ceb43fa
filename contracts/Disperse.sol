// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";

/// @title Disperse
/// @notice A shared third-party utility in the style of disperse.app: anyone sends ether or tokens to many
///         recipients in one transaction. protoscan does not scan it (it is `exclusive: false`); its
///         transactions arrive through track-tx and webhooks.
contract Disperse {
    using SafeERC20 for IERC20;

    error LengthMismatch(uint256 recipients, uint256 values);
    error EtherMismatch(uint256 sent, uint256 total);

    function disperseEther(address payable[] calldata recipients, uint256[] calldata values) external payable {
        if (recipients.length != values.length) revert LengthMismatch(recipients.length, values.length);
        uint256 total;
        for (uint256 i = 0; i < recipients.length; i++) {
            total += values[i];
            (bool ok,) = recipients[i].call{value: values[i]}("");
            require(ok, "Disperse: ether transfer failed");
        }
        if (total != msg.value) revert EtherMismatch(msg.value, total);
    }

    /// @notice Pull the total from the caller once, then pay every recipient.
    function disperseToken(IERC20 token, address[] calldata recipients, uint256[] calldata values) external {
        if (recipients.length != values.length) revert LengthMismatch(recipients.length, values.length);
        uint256 total;
        for (uint256 i = 0; i < values.length; i++) {
            total += values[i];
        }
        token.safeTransferFrom(msg.sender, address(this), total);
        for (uint256 i = 0; i < recipients.length; i++) {
            token.safeTransfer(recipients[i], values[i]);
        }
    }

    /// @notice Pay every recipient straight from the caller (one transferFrom each).
    function disperseTokenSimple(IERC20 token, address[] calldata recipients, uint256[] calldata values) external {
        if (recipients.length != values.length) revert LengthMismatch(recipients.length, values.length);
        for (uint256 i = 0; i < recipients.length; i++) {
            token.safeTransferFrom(msg.sender, recipients[i], values[i]);
        }
    }
}
