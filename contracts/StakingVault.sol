// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";
import {ReentrancyGuard} from "@openzeppelin/contracts/utils/ReentrancyGuard.sol";

/// @title StakingVault
/// @notice Stake `stakingToken`, earn `rewardToken`. Rewards stream at `rewardRate` (reward-token base units
///         per second) shared pro rata by stake, in the style of Synthetix StakingRewards. Rewards are paid
///         from the vault's own reward-token balance, which the owner tops up by plain transfers.
contract StakingVault is Ownable, ReentrancyGuard {
    using SafeERC20 for IERC20;

    IERC20 public immutable stakingToken;
    IERC20 public immutable rewardToken;

    uint256 public rewardRate;
    uint256 public lastUpdateTime;
    uint256 public rewardPerTokenStored;
    uint256 public totalStaked;

    mapping(address => uint256) public balanceOf;
    mapping(address => uint256) public userRewardPerTokenPaid;
    mapping(address => uint256) public rewards;

    event Deposited(address indexed user, uint256 amount);
    event Withdrawn(address indexed user, uint256 amount);
    event Claimed(address indexed user, uint256 amount);
    event RewardRateChanged(uint256 rewardRate);

    error ZeroAmount();
    error InsufficientStake(uint256 staked, uint256 requested);

    constructor(IERC20 stakingToken_, IERC20 rewardToken_, uint256 rewardRate_, address owner_) Ownable(owner_) {
        stakingToken = stakingToken_;
        rewardToken = rewardToken_;
        rewardRate = rewardRate_;
        lastUpdateTime = block.timestamp;
    }

    modifier updateReward(address account) {
        rewardPerTokenStored = rewardPerToken();
        lastUpdateTime = block.timestamp;
        if (account != address(0)) {
            rewards[account] = earned(account);
            userRewardPerTokenPaid[account] = rewardPerTokenStored;
        }
        _;
    }

    /// @notice Accumulated reward per staked token (scaled by 1e18).
    function rewardPerToken() public view returns (uint256) {
        if (totalStaked == 0) return rewardPerTokenStored;
        return rewardPerTokenStored + ((block.timestamp - lastUpdateTime) * rewardRate * 1e18) / totalStaked;
    }

    /// @notice Rewards `account` could claim now.
    function earned(address account) public view returns (uint256) {
        return (balanceOf[account] * (rewardPerToken() - userRewardPerTokenPaid[account])) / 1e18 + rewards[account];
    }

    function deposit(uint256 amount) external nonReentrant updateReward(msg.sender) {
        if (amount == 0) revert ZeroAmount();
        totalStaked += amount;
        balanceOf[msg.sender] += amount;
        stakingToken.safeTransferFrom(msg.sender, address(this), amount);
        emit Deposited(msg.sender, amount);
    }

    function withdraw(uint256 amount) external nonReentrant updateReward(msg.sender) {
        if (amount == 0) revert ZeroAmount();
        uint256 staked = balanceOf[msg.sender];
        if (amount > staked) revert InsufficientStake(staked, amount);
        totalStaked -= amount;
        balanceOf[msg.sender] = staked - amount;
        stakingToken.safeTransfer(msg.sender, amount);
        emit Withdrawn(msg.sender, amount);
    }

    /// @notice Pay out the caller's rewards, as far as the vault's reward balance allows.
    function claim() external nonReentrant updateReward(msg.sender) returns (uint256 paid) {
        uint256 owed = rewards[msg.sender];
        uint256 available = rewardToken.balanceOf(address(this));
        if (address(rewardToken) == address(stakingToken)) available -= totalStaked;
        paid = owed < available ? owed : available;
        rewards[msg.sender] = owed - paid;
        if (paid > 0) rewardToken.safeTransfer(msg.sender, paid);
        emit Claimed(msg.sender, paid);
    }

    function setRewardRate(uint256 rewardRate_) external onlyOwner updateReward(address(0)) {
        rewardRate = rewardRate_;
        emit RewardRateChanged(rewardRate_);
    }
}
